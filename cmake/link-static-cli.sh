#!/bin/sh
# Link launcher for the `loom` CLI (RULE_LAUNCH_LINK): runs the link command it is given with
# the shared libraries of protobuf, abseil, OpenSSL's libcrypto, MUNGE, zlib, libdeflate and Lua
# replaced by their static archives where Debian ships them, and libstdc++/libgcc linked in.
# Loading and relocating some forty shared libraries cost each command about 3 ms of its
# start; a command should start in well under the time a Slurm command takes to answer.
# glibc stays shared (NSS lookups of users and hosts need it).
set -eu
n=$#
i=0
while [ "$i" -lt "$n" ]; do
  a=$1
  shift
  case $a in
    */libprotobuf.so | */libabsl_*.so* | */libcrypto.so | */libmunge.so | */libz.so | */libdeflate.so | \
      */liblua5.4.so)
      s=${a%%.so*}.a
      [ -f "$s" ] && a=$s
      ;;
  esac
  set -- "$@" "$a"
  i=$((i + 1))
done
exec "$@" -static-libstdc++ -static-libgcc -ldl -pthread
