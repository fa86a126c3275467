#!/usr/bin/env bash
# Builds the directory of crate sources that run.sh patches crates.io with, from local
# git mirrors of the crates' GitHub repositories (no crates.io access needed).
#
#   vendor.sh MIRRORS OUT
#
# MIRRORS holds <owner>+<name>/repo git directories (as the fetch tool leaves them under
# /work/.mirror); OUT receives one work tree per repository, at the tag whose version the
# reference's Cargo.lock pins where the repository has that tag.
set -euo pipefail
MIRRORS=${1:?mirrors dir}
OUT=${2:?output dir}
mkdir -p "$OUT"

# name  mirror  ref  (ref: a tag, or HEAD where the lock's version has no tag)
while read -r name mirror ref; do
  [ -z "$name" ] && continue
  dst="$OUT/$name"
  if [ ! -d "$dst" ]; then
    if [ "$name" = zerocopy ]; then
      # The snapshot lacks some large binary blobs (Windows import libraries under
      # vendor/, tools/): export the tree without them.
      mkdir -p "$dst"
      git -C "$MIRRORS/$mirror/repo" archive "$ref" -- . ':!vendor' ':!tools' | tar x -C "$dst"
    else
      git clone -q "$MIRRORS/$mirror/repo" "$dst"
      git -C "$dst" checkout -q "$ref"
    fi
  fi
  echo "$name $ref $(git -C "$MIRRORS/$mirror/repo" rev-parse "$ref^{commit}" 2>/dev/null)"
done <<'LIST'
thiserror        dtolnay+thiserror          2.0.18
proc-macro2      dtolnay+proc-macro2        1.0.106
quote            dtolnay+quote              1.0.45
syn              dtolnay+syn                2.0.117
unicode-ident    dtolnay+unicode-ident      1.0.24
half             VoidStarKat+half-rs        v2.7.1
cfg-if           rust-lang+cfg-if           v1.0.4
zerocopy         google+zerocopy            v0.8.48
crunchy          eira-fransham+crunchy      HEAD
rayon            rayon-rs+rayon             v1.11.0
crossbeam-deque  crossbeam-rs+crossbeam     crossbeam-deque-0.8.7
crossbeam-epoch  crossbeam-rs+crossbeam     crossbeam-epoch-0.9.20
crossbeam-utils  crossbeam-rs+crossbeam     crossbeam-utils-0.8.21
either           rayon-rs+either            1.15.0
bytes            tokio-rs+bytes             v1.11.1
crc32c           zowens+crc32c              v0.6.8
rustc_version    djc+rustc-version-rs       HEAD
semver           dtolnay+semver             HEAD
tokio            tokio-rs+tokio             tokio-1.51.1
pin-project-lite taiki-e+pin-project-lite   v0.2.17
LIST

# The one local change: tokio's "full" feature (which the reference's workspace asks for)
# without net, process, signal and parking_lot, whose dependencies (mio, socket2, libc,
# signal-hook-registry, parking_lot, windows-sys, ...) are not vendored. The file reader
# uses tokio::io's traits only; the checker uses the runtime and tokio::fs.
python3 - "$OUT/tokio/tokio/Cargo.toml" <<'PY'
import re, sys
p = sys.argv[1]; s = open(p).read()
s2 = re.sub(r'full = \[[^\]]*\]',
            'full = ["fs", "io-util", "io-std", "macros", "rt", "rt-multi-thread", "sync", "time"]  # vendor.sh: net, parking_lot, process, signal removed',
            s, count=1)
if s2 != s: open(p, 'w').write(s2)
PY
grep -n '^full' "$OUT/tokio/tokio/Cargo.toml"
