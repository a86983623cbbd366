"""MkDocs hook: publish ``benchmarks/results/`` (tables and plots) with the site.

Pages link to the results as ``../benchmarks/results/NAME``, which resolves when reading
``docs/`` in the repository; for the site, those links are rewritten to ``benchmarks/results/NAME``
and the files are added under that path, so ``mkdocs build --strict`` checks them like any link.
"""

import os
import re

from mkdocs.structure.files import File, InclusionLevel

RESULTS = os.path.join("benchmarks", "results")
LINK = re.compile(r"\]\(\.\./benchmarks/results/")


def _root(config):
    return os.path.dirname(os.path.abspath(config.config_file_path))


def on_files(files, config):
    root = _root(config)
    folder = os.path.join(root, RESULTS)
    if os.path.isdir(folder):
        for name in sorted(os.listdir(folder)):
            if name.endswith((".md", ".png", ".svg")):
                file = File(f"benchmarks/results/{name}", src_dir=root, dest_dir=config.site_dir,
                            use_directory_urls=config.use_directory_urls)
                file.inclusion = InclusionLevel.NOT_IN_NAV  # linked from pages, not in the nav
                files.append(file)
    return files


def on_page_markdown(markdown, page, config, files):
    return LINK.sub("](benchmarks/results/", markdown)
