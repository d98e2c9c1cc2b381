"""CPython's own remote unwinder in a tight loop (runs under python3.15
inside the target root): prints calls per second as JSON."""
import json
import sys
import time

import _remote_debugging

pid, seconds = int(sys.argv[1]), float(sys.argv[2])
unwinder = _remote_debugging.RemoteUnwinder(pid, cache_frames=True, all_threads=True)
calls = errors = 0
start = time.perf_counter()
end = start + seconds
while time.perf_counter() < end:
    for _ in range(50):
        try:
            unwinder.get_stack_trace()
        except Exception:
            errors += 1
        calls += 1
elapsed = time.perf_counter() - start
print(json.dumps({"calls": calls, "errors": errors, "seconds": elapsed,
                  "calls_per_sec": calls / elapsed}))
