"""Maps the repository's ``experiments/`` and ``benchmarks/`` folders to the installed
packages ``jaxlab_experiments`` and ``jaxlab_benchmarks`` (metadata is in pyproject.toml).

The folders keep the design's top-level layout; the installed names live in jaxlab's
namespace, so a wheel never installs a generic top-level ``experiments`` package.
"""

from setuptools import find_packages, setup

MAPPED = {"jaxlab_experiments": "experiments", "jaxlab_benchmarks": "benchmarks"}

packages = find_packages(include=["jaxlab", "jaxlab.*"])
for name, folder in MAPPED.items():
    packages += [name] + [f"{name}.{sub}" for sub in find_packages(folder)]

setup(packages=packages, package_dir=MAPPED)
