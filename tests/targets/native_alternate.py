"""One thread that alternates between two C calls every few milliseconds,
for --native's pairing of a running thread's native frames with the Python
frame they were taken in (native/unwind.h: native_expect_frame).

argv: READY_FILE MODE
  sync   a loop calling compress_block() (zlib.compress, libz) and
         hash_password() (hashlib.pbkdf2_hmac, libcrypto) in turn
  tasks  an asyncio event loop running two tasks, one compressing and one
         hashing, each yielding after every call
A sample that shows libz's frames under hash_password() or libcrypto's
under compress_block() paired the wrong frames.
"""

import asyncio
import hashlib
import random
import sys
import zlib

import _ttlib as _tt

OUT = _tt.out_path()
MODE = sys.argv[2]
DATA = bytes(range(256)) * 4000


# Each call's length varies at random: calls of one fixed length make the
# alternation periodic, and a periodic sampler can then fall in step with
# it and see one function almost only.
def compress_block():
    return zlib.compress(DATA[:random.randrange(len(DATA) // 2, len(DATA))], 9)


def hash_password():
    return hashlib.pbkdf2_hmac("sha256", b"password", b"salt", random.randrange(10000, 30000))


def run_sync():
    _tt.ready(OUT)
    while True:
        compress_block()
        hash_password()


async def compressing():
    while True:
        compress_block()
        await asyncio.sleep(0)


async def hashing():
    while True:
        hash_password()
        await asyncio.sleep(0)


async def run_tasks():
    tasks = [asyncio.create_task(compressing(), name="compressing"),
             asyncio.create_task(hashing(), name="hashing")]
    _tt.ready(OUT)
    await asyncio.gather(*tasks)


if MODE == "sync":
    run_sync()
else:
    asyncio.run(run_tasks())
