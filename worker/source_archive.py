"""A recipe's source archive, for farm-worker (compiled into it; see source_archive.h): a PyPI
source distribution (kind "pypi") or a release archive named by URL (kind "archive").

  fetch INDEX PROJECT VERSION DEST   finds PROJECT-VERSION's sdist on a PEP 503 index, downloads
                                     it to DEST, checks it against the index's sha256 and prints
                                     one JSON line: {"file", "url", "sha256", "size"}
  download URL SHA256 DEST           downloads the archive URL names (http or https, a .tar.gz,
                                     .tgz, .tar.xz, .txz, .tar.bz2 or .tbz2) to DEST, checks it
                                     against SHA256 unless that is "" (none known), and prints
                                     the same JSON line, "sha256" being the digest it got
  unpack ARCHIVE DIR                 unpacks ARCHIVE's single top directory as DIR, refusing
                                     what could write outside DIR (absolute names, "..", links
                                     that leave the tree, devices); gzip, xz or bzip2 tar

fetch and download run with the network and nothing of the package's; unpack runs in the
build's sandbox without network. Only the standard library: this runs under the recipe's bare
interpreter. Exit 2 with one "error: ... Fix: ..." line on stderr for anything refused.
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

# The largest sdists (flash-attn with its cutlass) are ~10 MB, release archives of torch's
# ecosystem ~5 MB (torchvision) to ~300 MB (pytorch with its third_party): a cap far above
# them still stops a server that streams without end from filling the builds disk.
MAX_ARCHIVE_BYTES = 2 << 30
# What `download` takes (the recipe loader allows the same): tar archives unpack reads.
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2")


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


class HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    # urllib follows redirects to ftp too; a source comes over http(s) or not at all.
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if urllib.parse.urlparse(newurl).scheme not in ("http", "https"):
            raise Refused(f"{req.full_url} redirects to {newurl}, which is not http(s)")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def save(url, name, dest):
    """Streams `url` to dest/name, capped; returns (sha256 hex, size)."""
    digest = hashlib.sha256()
    size = 0
    path = os.path.join(dest, name)
    opener = urllib.request.build_opener(HttpOnlyRedirects)
    try:
        with opener.open(url, timeout=120) as response, open(path, "wb") as out:
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > MAX_ARCHIVE_BYTES:
                raise Refused(f"{url} is {declared} bytes, more than the {MAX_ARCHIVE_BYTES} "
                              "a source archive may have")
            while True:
                chunk = response.read(1 << 20)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_ARCHIVE_BYTES:
                    raise Refused(f"{url} is larger than the {MAX_ARCHIVE_BYTES} bytes a source "
                                  "archive may have")
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        if os.path.exists(path):
            os.unlink(path)
        raise
    return digest.hexdigest(), size


def download(url, name, sha256, dest):
    got, size = save(url, name, dest)
    if got != sha256:
        os.unlink(os.path.join(dest, name))
        raise Refused(f"{url} has sha256 {got}, the index says {sha256}: "
                      "refused. Fix: check the index or mirror that served it")
    return {"file": name, "url": url, "sha256": sha256, "size": size}


def download_archive(url, sha256, dest):
    """A release archive named by URL: checked against `sha256` when the recipe names one."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme not in ("http", "https"):
        raise Refused(f"{url} is not an http(s) URL. Fix: name the archive by https URL")
    name = urllib.parse.unquote(posixpath.basename(parsed.path))
    if (not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", name)
            or not name.lower().endswith(ARCHIVE_SUFFIXES)):
        raise Refused(f"{url} names no archive file ({', '.join(ARCHIVE_SUFFIXES)}). Fix: give "
                      "the URL of the release's .tar.gz")
    sha256 = sha256.lower()
    if sha256 and not re.fullmatch(r"[0-9a-f]{64}", sha256):
        raise Refused(f"{sha256!r} is not a sha256 (64 hex digits)")
    os.makedirs(dest, exist_ok=True)
    try:
        got, size = save(url, name, dest)
    except Refused:
        raise
    except Exception as e:  # urllib raises several kinds; all mean the same here
        raise Refused(f"cannot download {url}: {e}. Fix: check the URL and the build host's "
                      "network, or submit the archive with farmctl submit --source")
    if sha256 and got != sha256:
        os.unlink(os.path.join(dest, name))
        raise Refused(f"{url} has sha256 {got}, the recipe says {sha256}: refused. Fix: check "
                      "the URL (a release re-tagged or re-packed), then correct the recipe's "
                      "sha256 if the new archive is the one to build")
    return {"file": name, "url": url, "sha256": got, "size": size}


def inside(root, path):
    return path == root or path.startswith(root + os.sep)


def unpack(archive, target):
    root = os.path.realpath(target)
    # "r:*": gzip, xz or bzip2, told by the bytes, whatever the file is named.
    with tarfile.open(archive, "r:*") as tar:
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
        elif len(argv) == 4 and argv[0] == "download":
            print(json.dumps(download_archive(*argv[1:])))
        elif len(argv) == 3 and argv[0] == "unpack":
            unpack(*argv[1:])
        else:
            raise Refused("usage: fetch INDEX PROJECT VERSION DEST | download URL SHA256 DEST | "
                          "unpack ARCHIVE DIR")
    except (Refused, OSError, tarfile.TarError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
