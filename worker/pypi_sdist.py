"""A recipe's PyPI source distribution, for farm-worker (compiled into it; see pypi_sdist.h).

  fetch INDEX PROJECT VERSION DEST   finds PROJECT-VERSION's sdist on a PEP 503 index, downloads
                                     it to DEST, checks it against the index's sha256 and prints
                                     one JSON line: {"file", "url", "sha256", "size"}
  unpack ARCHIVE DIR                 unpacks ARCHIVE's single top directory as DIR, refusing
                                     what could write outside DIR (absolute names, "..", links
                                     that leave the tree, devices)

fetch runs with the network and nothing of the package's; unpack runs in the build's sandbox
without network. Only the standard library: this runs under the recipe's bare interpreter.
Exit 2 with one "error: ... Fix: ..." line on stderr for anything refused.
"""

import hashlib
import html.parser
import json
import os
import posixpath
import re
import sys
import tarfile
import urllib.parse
import urllib.request

MAX_SDIST_BYTES = 2 << 30  # the largest sdists (flash-attn with its cutlass) are ~10 MB


class Refused(Exception):
    pass


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


class Anchors(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def sdist_names(project, version):
    # PEP 625 names sdists after the normalized name with '_'; older ones keep the project's
    # own spelling.
    stems = {project, normalize(project), normalize(project).replace("-", "_")}
    return {f"{stem}-{version}.tar.gz".lower() for stem in stems}


def fetch(index, project, version, dest):
    page = index.rstrip("/") + "/" + normalize(project) + "/"
    try:
        with urllib.request.urlopen(page, timeout=60) as response:
            text = response.read(64 << 20).decode("utf-8", "replace")
    except Exception as e:  # urllib raises several kinds; all mean the same here
        raise Refused(f"cannot read {page}: {e}. Fix: check the worker's network and "
                      "PIP_INDEX_URL (the index sdists come from)")
    anchors = Anchors()
    anchors.feed(text)
    wanted = sdist_names(project, version)
    offered = []
    for href in anchors.hrefs:
        url = urllib.parse.urljoin(page, href)
        location, _, fragment = url.partition("#")
        name = urllib.parse.unquote(posixpath.basename(urllib.parse.urlparse(location).path))
        if name.endswith(".tar.gz"):
            offered.append(name)
        if name.lower() not in wanted:
            continue
        sha256 = urllib.parse.parse_qs(fragment).get("sha256", [""])[0].lower()
        if not re.fullmatch(r"[0-9a-f]{64}", sha256):
            raise Refused(f"{page} lists {name} without a sha256 hash. Fix: use an index that "
                          "publishes hashes (PEP 503 #sha256=...), as PyPI does")
        return download(location, name, sha256, dest)
    raise Refused(f"{page} has no source distribution of {project} {version}"
                  f" (sdists there: {', '.join(sorted(offered)[-5:]) or 'none'}). Fix: pick a "
                  "version that publishes an sdist, or build from git")


def download(url, name, sha256, dest):
    digest = hashlib.sha256()
    size = 0
    path = os.path.join(dest, name)
    with urllib.request.urlopen(url, timeout=120) as response, open(path, "wb") as out:
        while True:
            chunk = response.read(1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_SDIST_BYTES:
                raise Refused(f"{url} is larger than {MAX_SDIST_BYTES} bytes")
            digest.update(chunk)
            out.write(chunk)
    if digest.hexdigest() != sha256:
        os.unlink(path)
        raise Refused(f"{url} has sha256 {digest.hexdigest()}, the index says {sha256}: "
                      "refused. Fix: check the index or mirror that served it")
    return {"file": name, "url": url, "sha256": sha256, "size": size}


def inside(root, path):
    return path == root or path.startswith(root + os.sep)


def unpack(archive, target):
    root = os.path.realpath(target)
    with tarfile.open(archive, "r:gz") as tar:
        members = tar.getmembers()
        tops = {m.name.split("/", 1)[0] for m in members}
        if len(tops) != 1:
            raise Refused(f"{archive} has {len(tops)} top-level entries, not one directory")
        os.makedirs(root, exist_ok=False)
        for m in members:
            parts = m.name.split("/")[1:]
            if m.name.startswith("/") or ".." in parts:
                raise Refused(f"{archive}: member {m.name!r} names a path outside the tree")
            if not parts or parts == [""]:
                continue
            path = os.path.join(root, *parts)
            if not inside(root, os.path.realpath(os.path.dirname(path))):
                raise Refused(f"{archive}: member {m.name!r} goes through a link out of the tree")
            if m.isdir():
                os.makedirs(path, exist_ok=True)
            elif m.isfile():
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with tar.extractfile(m) as src, open(path, "wb") as out:
                    while chunk := src.read(1 << 20):
                        out.write(chunk)
                os.chmod(path, 0o755 if m.mode & 0o111 else 0o644)
            elif m.issym():
                dest = os.path.realpath(os.path.join(os.path.dirname(path), m.linkname))
                if os.path.isabs(m.linkname) or not inside(root, dest):
                    raise Refused(f"{archive}: link {m.name!r} -> {m.linkname!r} leaves the tree")
                os.makedirs(os.path.dirname(path), exist_ok=True)
                os.symlink(m.linkname, path)
            else:
                raise Refused(f"{archive}: member {m.name!r} is neither a file, a directory "
                              "nor a link")


def main(argv):
    try:
        if len(argv) == 5 and argv[0] == "fetch":
            print(json.dumps(fetch(*argv[1:])))
        elif len(argv) == 3 and argv[0] == "unpack":
            unpack(*argv[1:])
        else:
            raise Refused("usage: fetch INDEX PROJECT VERSION DEST | unpack ARCHIVE DIR")
    except (Refused, OSError, tarfile.TarError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
