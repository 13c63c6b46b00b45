#!/usr/bin/env python3
"""Generate conf/mime.types (nginx `types { ... }` syntax) from Debian's shared MIME database.

Usage: tools/gen_mime_types.py [--src /etc/mime.types] [--out conf/mime.types] [--check FILE]

The source is /etc/mime.types from Debian's `media-types` package (apt-get install media-types). The OVERRIDES
below come first and win: they pin the types browsers expect for common web extensions. Every other extension
maps to the first type that lists it in the Debian file. Each extension appears exactly once in the output.
"""
import argparse
import re
import subprocess
import sys

# Hand-maintained: type -> extensions. Listed first in the output, in this order, and never overridden.
OVERRIDES = [
    ("text/html", "html htm shtml"),
    ("text/css", "css"),
    ("text/xml", "xml"),
    ("text/plain", "txt text log"),
    ("text/csv", "csv"),
    ("text/markdown", "md markdown"),
    ("text/calendar", "ics"),
    ("text/vtt", "vtt"),
    ("text/mathml", "mml"),
    ("application/javascript", "js mjs"),
    ("application/json", "json map"),
    ("application/ld+json", "jsonld"),
    ("application/manifest+json", "webmanifest"),
    ("application/atom+xml", "atom"),
    ("application/rss+xml", "rss"),
    ("application/xhtml+xml", "xhtml xht"),
    ("application/wasm", "wasm"),
    ("application/pdf", "pdf"),
    ("application/zip", "zip"),
    ("application/gzip", "gz tgz"),
    ("application/x-tar", "tar"),
    ("application/x-bzip2", "bz2"),
    ("application/x-xz", "xz"),
    ("application/zstd", "zst"),
    ("application/x-7z-compressed", "7z"),
    ("application/vnd.rar", "rar"),
    ("application/java-archive", "jar war ear"),
    ("application/epub+zip", "epub"),
    ("application/rtf", "rtf"),
    ("application/msword", "doc"),
    ("application/vnd.ms-excel", "xls"),
    ("application/vnd.ms-powerpoint", "ppt"),
    ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", "docx"),
    ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"),
    ("application/vnd.openxmlformats-officedocument.presentationml.presentation", "pptx"),
    ("application/vnd.apple.mpegurl", "m3u8"),
    ("application/dash+xml", "mpd"),
    ("application/x-x509-ca-cert", "der pem crt"),
    ("application/octet-stream", "bin exe dll iso img dmg deb msi msp msm so"),
    ("image/gif", "gif"),
    ("image/jpeg", "jpeg jpg jpe"),
    ("image/png", "png"),
    ("image/apng", "apng"),
    ("image/svg+xml", "svg svgz"),
    ("image/webp", "webp"),
    ("image/avif", "avif"),
    ("image/x-icon", "ico"),
    ("image/bmp", "bmp"),
    ("image/tiff", "tif tiff"),
    ("font/woff", "woff"),
    ("font/woff2", "woff2"),
    ("font/ttf", "ttf"),
    ("font/otf", "otf"),
    ("font/collection", "ttc"),
    ("audio/mpeg", "mp3"),
    ("audio/ogg", "ogg oga"),
    ("audio/opus", "opus"),
    ("audio/wav", "wav"),
    ("audio/flac", "flac"),
    ("audio/aac", "aac"),
    ("audio/mp4", "m4a"),
    ("audio/midi", "mid midi kar"),
    ("video/mp4", "mp4 m4v"),
    ("video/webm", "webm"),
    ("video/ogg", "ogv"),
    ("video/mpeg", "mpeg mpg"),
    ("video/quicktime", "mov"),
    ("video/x-msvideo", "avi"),
    ("video/x-matroska", "mkv"),
    ("video/mp2t", "ts"),
    ("video/3gpp", "3gp 3gpp"),
    ("video/x-flv", "flv"),
]

TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_+-]*$")  # no dots: nginx matches only after the last one
TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$")


def debian_version():
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "media-types"], capture_output=True, text=True)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def read_debian(path):
    entries = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            mtype, exts = fields[0].lower(), [e.lower() for e in fields[1:]]
            if exts and TYPE.match(mtype):
                entries.append((mtype, [e for e in exts if TOKEN.match(e)]))
    return entries


def build(src):
    seen = set()
    out = []
    for mtype, exts in OVERRIDES:
        keep = []
        for e in exts.split():
            if e in seen:
                raise SystemExit(f"override lists .{e} twice")
            seen.add(e)
            keep.append(e)
        out.append((mtype, keep))
    overridden = len(out)
    # Debian entries, merged by type, in file order; extensions already taken are dropped.
    merged = {}
    order = []
    for mtype, exts in read_debian(src):
        for e in exts:
            if e in seen:
                continue
            seen.add(e)
            if mtype not in merged:
                merged[mtype] = []
                order.append(mtype)
            merged[mtype].append(e)
    # an override type that Debian also lists gets Debian's remaining extensions appended to its own line
    index = {t: i for i, (t, _) in enumerate(out)}
    for t in order:
        if t in index:
            out[index[t]][1].extend(merged[t])
        else:
            out.append((t, merged[t]))
    return out, overridden


def render(entries, overridden, src):
    width = 40
    lines = [
        "# mime.types — extension → Content-Type map for hayate, in nginx `types { type ext ...; }` syntax.",
        "# GENERATED by tools/gen_mime_types.py; do not edit by hand, edit the script's OVERRIDES and rerun.",
        f"# Source: {src} from Debian's media-types package, version {debian_version()}.",
        f"# The first {overridden} entries are the script's hand-maintained web overrides; each extension"
        " appears exactly once.",
        "",
        "types {",
    ]
    for mtype, exts in entries:
        if exts:
            lines.append(f"    {mtype.ljust(width - 1)} {' '.join(exts)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def check(path):
    """Verify a generated file: syntax and no duplicate extension. Returns a list of problems."""
    problems = []
    seen = {}
    text = open(path, encoding="utf-8").read()
    body = re.search(r"^types\s*\{(.*)^\}", text, re.S | re.M)
    if not body:
        return ["no types { } block"]
    for n, line in enumerate(body.group(1).splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not line.endswith(";"):
            problems.append(f"line {n}: no ';'")
            continue
        fields = line[:-1].split()
        if len(fields) < 2 or not TYPE.match(fields[0]):
            problems.append(f"line {n}: bad entry {line!r}")
        for e in fields[1:]:
            if e in seen:
                problems.append(f".{e} for both {seen[e]} and {fields[0]}")
            seen[e] = fields[0]
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default="/etc/mime.types")
    ap.add_argument("--out", default="conf/mime.types")
    ap.add_argument("--check", metavar="FILE", help="only verify FILE")
    args = ap.parse_args()
    if args.check:
        problems = check(args.check)
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    entries, overridden = build(args.src)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(render(entries, overridden, args.src))
    problems = check(args.out)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
