"""`tools/induction_figures.py` as a module (tools/ is not a package), for the tests that check
its figures and share its iTHOR collection; and, run as a script with a run's directory, a
second collector of that collection (`collect_ithor_shared`), which `ithor_symbolic_logs`
starts beside itself."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PATH = Path(__file__).resolve().parents[2] / "tools" / "induction_figures.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("induction_figures", PATH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shared_ithor_folders(run_directory: Path) -> tuple[Path, Path]:
    """The shared collection's logs, and the claims of its tasks, in the run's directory."""
    return run_directory / "ithor-symbolic-logs", run_directory / "ithor-symbolic-claims"


def collect_ithor_shared(run_directory: Path) -> list[str]:
    """Collect every task of the figures' iTHOR collection that no collector has claimed yet,
    one at a time (a claim is a file made with `O_EXCL`); returns every task id of the
    collection. A task's log depends on that task alone, so who collects which changes no
    log; `<task>.done` says it is written."""
    tool = load()
    logs, claims = shared_ithor_folders(run_directory)
    claims.mkdir(parents=True, exist_ok=True)
    task_ids = tool.ithor_task_ids()
    for task_id in task_ids:
        try:
            (claims / task_id).open("x").close()
        except FileExistsError:
            continue  # another collector has it
        tool.ithor_logs(logs, [task_id])
        (claims / f"{task_id}.done").touch()  # (a task collect reports failed has no log)
    return task_ids


if __name__ == "__main__":
    collect_ithor_shared(Path(sys.argv[1]))
