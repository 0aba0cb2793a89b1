#!/bin/sh
# Stands in for sageattn-selftest: $FAKE_SELFTEST picks what it does, to test how
# `sagebuild selftest` copes with each answer the real program may give (or fail to give).
echo "$*" > "${FAKE_SELFTEST_ARGS:-/dev/null}"
mode_h200() { # safe (true/false) and verdict of int8-fp8, and of fp16
    if [ "$1" = true ]; then reasons='[]'; else reasons='["q-x10 L1024 d128: cos 0.998500 < 0.999"]'; fi
    if [ "$3" = true ]; then f16reasons='[]'; else f16reasons='["random: rel-L1 0.0700 > 0.05"]'; fi
    cat <<EOS
{"schema":1,"library":{"abi":1,"archs":"sm_90"},"skipped":null,
 "devices":[{"index":0,"name":"NVIDIA H200","cc":"9.0","uuid":"GPU-0a1b2c3d-0000-1111-2222-333344445555",
  "has_code":true,"build_hint":null,"error":null,
  "modes":[{"mode":"int8-fp16","supported":true,"reason":null,"verdict":"$4","safe":$3,
    "unsafe_reasons":$f16reasons,"goal":"met","goal_notes":[],
    "accuracy":{"worst_cos":0.99994,"worst_rel_l1":0.0110,"nan_or_inf":false,"cases":[
      {"name":"random","b":1,"hq":8,"hkv":8,"lq":1000,"lkv":1000,"d":64,"causal":false,
       "layout":"HND","dtype":"fp16","cos":0.99995,"rel_l1":0.01,"max_abs":0.02,
       "coverage_ok":true,"pass":true,"safe":true,"unsafe_reason":null}]},
    "speed":[{"b":1,"h":32,"l":16384,"d":128,"causal":false,"ms":9.1,"tops":503.2,
              "speedup_vs_fp16":1.49}]},
   {"mode":"int8-fp8","supported":true,"reason":null,"verdict":"$2","safe":$1,
    "unsafe_reasons":$reasons,"goal":"missed","goal_notes":["q-x10 L1024 d128: cos 0.998500 rel-L1 0.0391"],
    "accuracy":{"worst_cos":0.99921,"worst_rel_l1":0.0391,"nan_or_inf":false,"cases":[]},
    "speed":[{"b":1,"h":32,"l":16384,"d":128,"causal":false,"ms":10.0,"tops":455.0,
              "speedup_vs_fp16":1.35}]},
   {"mode":"fp16","supported":true,"reason":null,"verdict":"$4","safe":$3,
    "unsafe_reasons":$f16reasons,"goal":"met","goal_notes":[],
    "accuracy":{"worst_cos":1.0,"worst_rel_l1":0.0003,"nan_or_inf":false,"cases":[]},
    "speed":[{"b":1,"h":32,"l":16384,"d":128,"causal":false,"ms":13.5,"tops":338.0,
              "speedup_vs_fp16":1.0}]}],
  "recommended_mode":"int8-fp16"}]}
EOS
}
case "${FAKE_SELFTEST:-skip}" in
skip)
    echo '{"schema":1,"library":{"abi":1,"archs":"sm_120a"},"skipped":"no GPU: cuInit returned 100 (no CUDA-capable device)","devices":[]}'
    echo "skipped: no GPU: cuInit returned 100" >&2
    exit 77 ;;
pass) mode_h200 true pass true pass; exit 0 ;;
warn) mode_h200 false warn true pass; exit 1 ;;
unsafe) mode_h200 false warn false warn; exit 2 ;;
nocode)
    echo '{"schema":1,"library":{"abi":1,"archs":"sm_90"},"skipped":null,"devices":[{"index":0,"name":"NVIDIA GeForce RTX 5090","cc":"12.0","has_code":false,"build_hint":"sagebuild build --arch sm_120a","modes":[],"recommended_mode":null}]}'
    exit 2 ;;
crash) echo "running int8-fp16..." >&2; kill -SEGV $$ ;;
hang) echo "running..." >&2; sleep 60 ;;
garbage) echo "Hello, this is not JSON"; echo "something broke" >&2; exit 0 ;;
file) cat "$FAKE_SELFTEST_FILE"; exit "${FAKE_SELFTEST_RC:-0}" ;;
truncated) echo '{"schema":1,"library":{"abi":1},"devices":[{"index":0,'; exit 2 ;;
esac
