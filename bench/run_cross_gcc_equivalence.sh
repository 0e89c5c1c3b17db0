#!/usr/bin/env bash
# Does Debian's x86_64 cross GCC (g++-12-aarch64-linux-gnu) write the objects the native
# aarch64 GCC 12 of the arm64 root (scripts/arm64-root.sh) writes, on the same input at the
# same paths? (issue 25, item 9: could x86_64 workers take an aarch64 host's compiles?)
#
# Each unit of a small real corpus (tests/data/cc, a few libfarm sources on absl and the
# standard library, a function with a dynamic stack allocation) is compiled under each flag
# set (-O2, -O2 -g, -O2 -fPIC, -O2 -fstack-protector-strong) twice per setting, once by each
# compiler, in one directory at one path, with the same argv but for the driver's name, and
# the objects are compared byte for byte: identical, identical once .comment (the compiler's
# version string) is removed, or else the sections that differ.
#   installed: each compiler as a build uses it: the native one in the root, the cross one
#              with the root as --sysroot (as scripts/cross-build-aarch64.sh does); the
#              cross one then reads its own libstdc++ and glibc headers (the -arm64-cross
#              packages) before the root's.
#   same-headers: both with -nostdinc and the native compiler's search list, the cross one
#              in a sandbox that shows the root's /usr/include and /usr/lib/gcc at those
#              paths: the same header bytes at the same paths, so only the compilers differ.
# The native compiles run under qemu-user: a few minutes in all.
set -euo pipefail
cd "$(dirname "$0")/.."
src_root="$PWD"
root="$(bash scripts/arm64-root.sh)"
cross=aarch64-linux-gnu-g++-12
cross_c=aarch64-linux-gnu-gcc-12
command -v "$cross" >/dev/null || { echo "no $cross. Fix: apt-get install g++-aarch64-linux-gnu" >&2; exit 1; }
work=/tmp/wheelfarm-cross-gcc
rm -rf "$work"
mkdir -p "$work/src/libfarm" "$work/out"
trap 'rm -rf "$work"' EXIT
cp -r tests/data/cc "$work/src/cc"
cp -r libfarm/versions libfarm/cc "$work/src/libfarm/"
mkdir -p "$work/src/bench"
# A dynamic stack allocation: what -fstack-protector-strong (in Debian's and Python's default
# CFLAGS) guards differently on AArch64 since gcc-12 12.2.0-14+deb12u1 (CVE-2023-4039).
cat >"$work/src/bench/vla.c" <<'C'
void fill(char *p, int n);
int vla(int n) {
  char buf[n];
  fill(buf, n);
  return buf[0];
}
C

# unit and its own flags
units=(
  "cc/shapes.cc|-DSHAPES_SCALE=3 -isystem cc/sys"
  "cc/fallthrough.cc|"
  "cc/warns.c|-DFORCED_VALUE=1"
  "libfarm/versions/dotted_version.cc|-std=gnu++20 -I."
  "libfarm/cc/depfile_layout.cc|-std=gnu++20 -I."
  "libfarm/cc/make_dependencies.cc|-std=gnu++20 -I."
  "bench/vla.c|"
)
flag_sets=("-O2" "-O2 -g" "-O2 -fPIC" "-O2 -fstack-protector-strong")
search=(/usr/include/c++/12 /usr/include/aarch64-linux-gnu/c++/12 /usr/include/c++/12/backward
  /usr/lib/gcc/aarch64-linux-gnu/12/include /usr/include/aarch64-linux-gnu /usr/include)
same_headers=(-nostdinc)
for d in "${search[@]}"; do same_headers+=(-isystem "$d"); done

native() {  # driver args...: in the arm64 root, under qemu
  bwrap --die-with-parent --ro-bind "$root" / --proc /proc --dev /dev --tmpfs /tmp --bind "$work" "$work" \
    --chdir "$work/src" --clearenv --setenv PATH /usr/bin:/bin --setenv LANG C "$@"
}
cross_same_headers() {  # driver args...: this machine, the root's headers at the native paths
  bwrap --die-with-parent --ro-bind / / --proc /proc --dev /dev --tmpfs /tmp --bind "$work" "$work" \
    --ro-bind "$root/usr/include" /usr/include --ro-bind "$root/usr/lib/gcc" /usr/lib/gcc \
    --chdir "$work/src" --clearenv --setenv PATH /usr/bin:/bin --setenv LANG C "$@"
}
in_src() { (cd "$work/src" && env -i PATH=/usr/bin:/bin LANG=C "$@"); }

# Sections whose bytes differ between two ELF64 objects, by name (a section only in one
# counts as differing), and whether the layout alone (offsets, sizes) differs besides.
differing_sections() {
  python3 - "$1" "$2" <<'PY'
import struct, sys
def sections(path):
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = data[heads[shstrndx][4]:heads[shstrndx][4] + heads[shstrndx][5]]
    out = {}
    for h in heads[1:]:
        name = names[h[0]:names.index(b"\0", h[0])].decode()
        out[name] = data[h[4]:h[4] + h[5]] if h[1] != 8 else h[5]  # SHT_NOBITS: its size
    return out
a, b = sections(sys.argv[1]), sections(sys.argv[2])
diff = [n for n in list(a) + [n for n in b if n not in a] if a.get(n) != b.get(n)]
print(" ".join(diff) if diff else "no section (headers and offsets only)")
PY
}

same=0
differ=0
but_comment=0
for setting in installed same-headers; do
  for unit in "${units[@]}"; do
    file="${unit%%|*}"
    read -r -a own <<<"${unit#*|}"
    for flags in "${flag_sets[@]}"; do
      read -r -a f <<<"$flags"
      case "$file" in *.c) nd=gcc-12 xd=$cross_c ;; *) nd=g++-12 xd=$cross ;; esac
      tag="$(echo "$file $flags" | tr ' /=' '___')"
      extra=()
      [ "$setting" = same-headers ] && extra=("${same_headers[@]}")
      args=("${f[@]}" "${own[@]}" "${extra[@]}" -c "$file")
      native "$nd" "${args[@]}" -o "$work/out/native-$tag.o"
      if [ "$setting" = installed ]; then
        in_src "$xd" --sysroot="$root" "${args[@]}" -o "$work/out/cross-$tag.o"
      else
        cross_same_headers "$xd" "${args[@]}" -o "$work/out/cross-$tag.o"
      fi
      if cmp -s "$work/out/native-$tag.o" "$work/out/cross-$tag.o"; then
        same=$((same + 1))
        echo "$setting  $file $flags: identical"
      else
        differ=$((differ + 1))
        # The compilers' version strings differ (.comment): is that all?
        aarch64-linux-gnu-objcopy -R .comment "$work/out/native-$tag.o" "$work/na.o"
        aarch64-linux-gnu-objcopy -R .comment "$work/out/cross-$tag.o" "$work/xa.o"
        if cmp -s "$work/na.o" "$work/xa.o"; then
          but_comment=$((but_comment + 1))
          echo "$setting  $file $flags: identical but for .comment"
        else
          echo "$setting  $file $flags: differs in $(differing_sections "$work/out/native-$tag.o" "$work/out/cross-$tag.o")"
        fi
      fi
    done
  done
  echo "$setting: $((same + differ)) objects: $same identical, $but_comment identical but for .comment, $((differ - but_comment)) differ beyond it"
  first="$work/out/native-$(echo "cc/shapes.cc -O2" | tr ' /=' '___').o"
  echo "$setting: .comment native: $(aarch64-linux-gnu-readelf -p .comment "$first" | sed -n 's/^ *\[ *[0-9]*\] *//p')"
  echo "$setting: .comment cross:  $(aarch64-linux-gnu-readelf -p .comment "${first/native-/cross-}" | sed -n 's/^ *\[ *[0-9]*\] *//p')"
  same=0
  differ=0
  but_comment=0
done
