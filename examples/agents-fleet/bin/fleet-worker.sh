#!/bin/sh
# A stand-in for a fleet worker: it reads the bug from stdin and its skill text from ENGINE_SYSTEM,
# and answers the way that skill tells it to. (It knows the fixes: the point is the skill's effect.)
cat > /dev/null
case "$ENGINE_CASE_ID" in
  off-by-one) fix='for i in range(0, n):' ;;
  wrong-operator) fix='total = price + tax' ;;
  inverted-check) fix='if user.is_admin: grant()' ;;
  missing-await) fix='data = await fetch(url)' ;;
  mutable-default) fix='def add(item, items=None):' ;;
  string-compare) fix="if name == 'admin':" ;;
  int-division) fix='mean = total // count' ;;
  unclosed-file) fix='with open(path) as f: data = f.read()' ;;
  *) echo "unknown bug $ENGINE_CASE_ID" >&2; exit 2 ;;
esac
case "$ENGINE_SYSTEM" in
  *"fixed line only"*)
    echo "$fix"
    # now and then it cannot help explaining itself
    if [ "$ENGINE_CASE_ID" = unclosed-file ] && [ "$ENGINE_REPEAT" = 2 ]; then
      printf '%s\n' "The file was never closed." "A with block closes it."
    fi ;;
  *checklist*)
    printf '%s\n' "1. Reproduced the bug." "2. Fix: $fix" "3. Tested with the failing case." ;;
  *)
    printf '%s\n' "Let me walk through this bug step by step." "The line is wrong as written." "$fix" \
      "This works because the corrected line does what was meant." ;;
esac
