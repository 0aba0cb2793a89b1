#!/bin/sh
# Names a manifest controls are checked before any becomes a path: a release_label that climbs
# out of the data folder, a relative_path naming the cache's own lock file, one ending in .part,
# one starting with '.', and two components sharing one relative_path are each refused before a
# byte is downloaded, with a message naming the manifest's entry; nothing is created.
. "$(dirname "$0")/fetch/lib.sh"
fetch_setup
server_start
# A data folder deep enough that "../../../x" from the default prefix stays inside $T.
export XDG_DATA_HOME="$T/a/b/c/data"
mkdir -p "$T/cache/cuda"
: >"$T/cache/cuda/.lock" # as an earlier run leaves it

# variant NAME PYTHON: writes $T/NAME.json, the test mirror's manifest changed by PYTHON (d).
variant() {
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))' "$MANIFEST" "$T/$1.json" "$2" || fail "variant $1"
}
# refused NAME WANT...: fetch-cuda with $T/NAME.json fails before any download, saying WANT.
refused() {
    name=$1
    shift
    lines=$(wc -l <"$T/server.log")
    $SB fetch-cuda --manifest "$T/$name.json" --mirror "$M/ok/" --no-default-mirror \
        --no-check "$@" >"$T/$name.out" 2>&1
    rc=$?
    [ $rc = 2 ] || fail "$name: exit $rc, expected 2: $(cat "$T/$name.out")"
    [ "$(wc -l <"$T/server.log")" = "$lines" ] ||
        fail "$name: the mirror was asked for files: $(tail -n +$((lines + 1)) "$T/server.log")"
    [ -e "$T/cache/cuda/.lock" ] || fail "$name: the cache's lock file is gone"
    [ ! -e "$T/a/b/c/x" ] || fail "$name: a toolkit was installed outside the data folder"
    ls "$XDG_DATA_HOME/sagebuild" 2>/dev/null | grep -q cuda && fail "$name: a prefix was made"
    no_debris "$T/a/b/c"
}
expect() { grep -q -- "$2" "$T/$1.out" || fail "$1: the error lacks '$2': $(cat "$T/$1.out")"; }

variant label 'd["release_label"] = "9.9.9/../../../x"'
refused label
expect label "release_label '9.9.9/../../../x' is not a release number"

variant lock 'd["cuda_cccl"]["linux-x86_64"]["relative_path"] = ".lock"'
refused lock
expect lock "cuda_cccl.*relative_path '.lock'"

variant part 'd["cuda_crt"]["linux-x86_64"]["relative_path"] = d["cuda_nvcc"]["linux-x86_64"]["relative_path"] + ".part"'
refused part
expect part "ends in .part"

variant hidden 'd["libnvvm"]["linux-x86_64"]["relative_path"] = "libnvvm/.x/a.tar.xz"'
refused hidden
expect hidden "starting with '.'"

variant twice 'd["cuda_crt"]["linux-x86_64"]["relative_path"] = d["cuda_nvcc"]["linux-x86_64"]["relative_path"]'
refused twice --prefix "$T/p/cuda"
expect twice "cuda_nvcc and cuda_crt have the same relative_path"

variant absolute 'd["cuda_cudart"]["linux-x86_64"]["relative_path"] = "/etc/passwd"'
refused absolute --prefix "$T/p/cuda"
expect absolute "relative_path '/etc/passwd': it is an absolute path"
[ ! -e "$T/p/cuda" ] || fail "a prefix was made"

# The unchanged manifest still installs, by its label, into the data folder.
$SB fetch-cuda --manifest "$MANIFEST" --mirror "$M/ok/" --no-default-mirror --no-check \
    >"$T/good.out" 2>&1 || fail "the good manifest: $(cat "$T/good.out")"
[ -x "$XDG_DATA_HOME/sagebuild/cuda-13.0.9/bin/nvcc" ] || fail "not installed by its label"
echo ok
