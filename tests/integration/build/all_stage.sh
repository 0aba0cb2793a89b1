# all_stage FILE STAGE EXPR: a Python expression over `sagebuild all --json`'s output in FILE: d
# (the whole), s (stage STAGE's entry), o (its own output), r (o's result) and p (r's payload);
# a tuple prints as its items with spaces between. Sourced by the tests of `all`.
all_stage() {
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
s=([x for x in d["stages"] if x["stage"]==sys.argv[2]] or [{}])[0]
o=s.get("output") or {}
r=o.get("result") or {}
p=r.get("payload") or {}
v=eval(sys.argv[3])
print(" ".join(map(str, v)) if isinstance(v, tuple) else v)' "$1" "$2" "$3"
}
