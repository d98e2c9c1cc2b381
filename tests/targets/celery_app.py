"""A Celery app (Debian's python3-celery) on kombu's filesystem transport,
so no broker runs: its queue is a directory (TT_CELERY_DIR, default
/tmp/celery). Tasks: add(x, y). Run a prefork worker with
`celery -A celery_app worker --pool=prefork -c 2` from this directory."""
import os

from celery import Celery

QUEUE = os.environ.get("TT_CELERY_DIR", "/tmp/celery")
for sub in ("queue", "processed"):
    os.makedirs(os.path.join(QUEUE, sub), exist_ok=True)

app = Celery("celery_app", broker="filesystem://")
app.conf.update(
    broker_transport_options={"data_folder_in": os.path.join(QUEUE, "queue"),
                              "data_folder_out": os.path.join(QUEUE, "queue"),
                              "processed_folder": os.path.join(QUEUE, "processed")},
    result_backend=None, worker_hijack_root_logger=False, broker_connection_retry_on_startup=True)


@app.task
def add(x, y):
    return x + y
