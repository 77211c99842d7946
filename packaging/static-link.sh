#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The release binary's link (RULE_LAUNCH_LINK of the pathwise target when
# PATHWISE_STATIC_RELEASE=ON): "$@" is the link command CMake made. Each
# library named by STATIC below is swapped for its .a, and what its shared
# object needs (its DT_NEEDED) is added: the .a of the libraries also in
# STATIC, the shared library otherwise.
#
# Static: every library with a Debian .a that no library which stays dynamic
# also links (two copies of one library in a process, a static and a
# shared one, share no state). Dynamic: glibc; libstdc++ (spdlog and fmt
# are shared only, and link it); spdlog, fmt (no .a in bookworm); libcurl (its libnghttp2, librtmp, libssh2,
# libpsl, libgssapi and libldap have no .a) and what it shares with others:
# OpenSSL, GnuTLS and its crypto libraries, zlib, zstd.
set -euo pipefail
libdir=/usr/lib/x86_64-linux-gnu
STATIC_RE='^(bpf|elf|nvme|uring|absl_.*|microhttpd|yaml-cpp|crypt|protobuf|ncurses|tinfo)$'
# Added by the compiler driver in any case.
SYSTEM_RE='^lib(c|m|dl|pthread|rt|gcc_s|stdc\+\+)\.so|^ld-linux'

args=() statics=() dyn=()
declare -A seen=()
add_static() {  # NAME: its .a and, recursively, what its .so needs
  local name=$1 so n base
  [[ -n ${seen[$name]:-} ]] && return
  seen[$name]=1
  statics+=("$libdir/lib$name.a")
  # The versioned file: lib$name.so may be a linker script (ncurses).
  so=$(ls "$libdir"/lib"$name".so.* 2>/dev/null | head -1)
  [[ -n $so ]] || return 0
  while read -r n; do
    [[ $n =~ $SYSTEM_RE ]] && continue
    base=${n#lib}; base=${base%%.so*}
    if [[ $base =~ $STATIC_RE && -f $libdir/lib$base.a ]]; then
      add_static "$base"
    else
      dyn+=("-l:$n")
    fi
  done < <(readelf -d "$so" 2>/dev/null | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
}
for a in "$@"; do
  name=""
  if [[ $a =~ ^$libdir/lib(.+)\.so(\.[0-9.]+)?$ ]]; then
    name=${BASH_REMATCH[1]}
  elif [[ $a =~ ^-l([^:].*)$ ]]; then
    name=${BASH_REMATCH[1]}
  fi
  if [[ -n $name && $name =~ $STATIC_RE && -f $libdir/lib$name.a ]]; then
    add_static "$name"
  else
    args+=("$a")
  fi
done
# What was linked statically, for the release's NOTICE.static and its test.
for ((i = 0; i < ${#args[@]} - 1; i++)); do
  if [[ ${args[i]} == -o ]]; then
    printf '%s\n' "${statics[@]}" >"${args[i + 1]}.static-libs"
  fi
done
exec "${args[@]}" -Wl,--start-group "${statics[@]}" -Wl,--end-group \
  -Wl,--as-needed "${dyn[@]}" -Wl,--no-as-needed
