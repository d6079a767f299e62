#!/usr/bin/env bash
# copy-module-into-itk.sh DEST: copies this repository's tracked and
# untracked-but-not-ignored files into DEST (an ITK source tree's
# Modules/Remote/CudaImageFilters; a copy, since ITK's module scan does not
# follow symbolic links), for scripts/build-itk-python-wrapping.sh and
# scripts/build-itk-versions.sh.
#
# A file whose content changed (or is new) gets a fresh modification time;
# an unchanged one keeps the one it has in DEST; files gone from the
# repository are removed. So the next build recompiles exactly what changed,
# also when an earlier build compiled from an older copy after the
# repository's file was last edited (a copy that kept the repository's
# times would then look older than its stale objects, and nothing would be
# rebuilt).
set -euo pipefail
dest=$1
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
  tar --null -T - -cf -) | tar -xf - -C "$staging"
mkdir -p "$dest"
python3 - "$staging" "$dest" <<'PY'
import filecmp, os, shutil, sys

src, dst = sys.argv[1:3]
seen = set()
changed = 0
for root, _, files in os.walk(src):
    rel = os.path.relpath(root, src)
    os.makedirs(os.path.join(dst, rel), exist_ok=True)
    for f in files:
        s, d = os.path.join(root, f), os.path.join(dst, rel, f)
        seen.add(os.path.normpath(os.path.join(rel, f)))
        if not os.path.exists(d) or not filecmp.cmp(s, d, shallow=False):
            shutil.copyfile(s, d)
            shutil.copymode(s, d)
            changed += 1
removed = 0
for root, _, files in os.walk(dst):
    rel = os.path.relpath(root, dst)
    for f in files:
        if os.path.normpath(os.path.join(rel, f)) not in seen:
            os.remove(os.path.join(root, f))
            removed += 1
print(f"module copy: {len(seen)} files, {changed} new or changed, {removed} removed")
PY
