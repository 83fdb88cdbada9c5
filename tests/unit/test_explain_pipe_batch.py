"""DeepSpeed's batch assertion under a PipelineModule (ds-pipe-batch-dp, sigworld.py): the data-parallel size is the
world over the stages, so a batch written (or filled in) for every process fails. Read only where rank 0 printed the
pipeline grid; without it the assertion keeps its other readings."""

from pathlib import Path

from dscluster import explain

LOG = Path(__file__).resolve().parents[1] / "data" / "explain" / "ds-pipe-batch-dp.log"
GRID = "Using topology: {ProcessCoord(pipe=0, data=0): 0, ProcessCoord(pipe=0, data=1): 1, ProcessCoord(pipe=1, " \
       "data=0): 2, ProcessCoord(pipe=1, data=1): 3}\n"
TB = ('Traceback (most recent call last):\n  File "train.py", line 30, in <module>\n    engine, *_ = '
      'deepspeed.initialize(args=args, model=model)\n  File "/opt/venv/lib/python3.10/site-packages/deepspeed/runtime/'
      'config.py", line 699, in _batch_assertion\n    assert train_batch == micro_batch * grad_acc * self.world_size, (\n')


def test_two_stages_on_two_processes_with_the_batch_filled_for_both():
    found = explain.explain(LOG.read_text())
    assert found.signature == "ds-pipe-batch-dp" and not found.retry
    assert "all three batch keys" in found.fix


def test_older_deepspeeds_words_and_a_grid_of_two_data_parallel_copies():
    # DeepSpeed before #1734 printed no space before the numbers; 4 stages x 2 copies on 8 processes
    old = GRID + TB + ("AssertionError: Check batch related parameters. train_batch_size is not equal to "
                       "micro_batch_per_gpu * gradient_acc_step * world_size16 != 2 * 1 * 2\n")
    assert explain.explain(old).signature == "ds-pipe-batch-dp"


def test_without_the_pipeline_grid_the_assertion_keeps_its_other_readings():
    one = TB + ("AssertionError: Check batch related parameters. train_batch_size is not equal to "
                "micro_batch_per_gpu * gradient_acc_step * world_size 16 != 2 * 1 * 1\n")
    assert explain.explain(one).signature == "ds-world-size-one"
    eight = one.replace("* 1 * 1", "* 1 * 8")
    assert explain.explain(eight).signature not in ("ds-pipe-batch-dp", "ds-world-size-one")


def test_a_pipeline_run_failing_otherwise_is_not_read_as_its_batch():
    other = GRID + TB + "AssertionError: num_stages (3) must divide distributed world size (2)\n"
    assert explain.explain(other).signature != "ds-pipe-batch-dp"
