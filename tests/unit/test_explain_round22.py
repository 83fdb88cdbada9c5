"""Round 22's rules (issue 45), the other frameworks run on multi-GPU servers (sigframeworks.py, sigmessages.py): a
model the tensor-parallel size cannot split (vLLM, TGI, ColossalAI), a world size the model-parallel sizes do not divide
(Megatron core, vLLM), fairseq asked to initialise distributed training for one process, Lightning's GPU request beyond
the GPUs it sees and its ddp strategy refused in a notebook, a model read through its DDP wrapper, NCCL refusing a newer
caller's "undefined" marker, Horovod without its framework extension, Click's `tune` shadowing torchtune's, and a missing
submodule of an installed framework: a second wording of each, in another version's or another caller's words than the
corpus case it was written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain
from dscluster.sigframeworks import FRAMEWORK_SIGNATURES


@pytest.mark.parametrize("text,expected", [
    # TGI's MoE layers spell it "chosen" (the case was its embedding's "choosen")
    ("    tensor = _load_experts(config, f\"{prefix}.experts\", weights)\n"
     "AssertionError: The chosen size 14336 is not compatible with sharding on 3 shards\n", "tp-size-indivisible"),
    # ColossalAI shardformer's policy assertion (the case was vLLM's ValueError)
    ("AssertionError: The number of attention heads must be divisible by tensor parallel size.\n",
     "tp-size-indivisible"),
    # vLLM's pipeline-parallel check
    ("ValueError: Total number of hidden layers (30) must be divisible by pipeline parallel size (4).\n",
     "tp-size-indivisible"),
    # vLLM's parallel_state (the case was Megatron core's under NeMo)
    ("[rank1]: RuntimeError: world_size (8) is not equal to tensor_model_parallel_size (4) x "
     "pipeline_model_parallel_size (1)\n", "world-size-indivisible"),
    # Megatron core's expert-parallel check, under NeMo 2
    ("1: RuntimeError: decoder world_size (4) is not divisible by expert_tensor_model_pipeline_parallel size (8)\n",
     "world-size-indivisible"),
    # fairseq's hydra entry point, the exception on its own line (the case had it on the frame's line)
    ("  File \"/opt/fairseq/fairseq/distributed/utils.py\", line 241, in distributed_init\n"
     "    raise ValueError(\"Cannot initialize distributed with distributed_world_size=1\")\n"
     "ValueError: Cannot initialize distributed with distributed_world_size=1\n", "world-size-one"),
    # pytorch_lightning before 1.8: "GPUs", the message on indented lines under SLURM's one GPU per task
    ("pytorch_lightning.utilities.exceptions.MisconfigurationException: \n                You requested GPUs: [0, 1]\n"
     "                But your machine only has: [0]\n", "invalid-device-ordinal"),
    # the same check on a CPU-only torch: no GPU at all
    ("lightning_fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [0]\n"
     " But your machine only has: []\n", "no-gpu"),
    # Lightning 1.3's wording of the interactive check (the case was 2.x's Trainer(strategy=...))
    ("MisconfigurationException: Selected distributed backend ddp is not compatible with an interactive environment. "
     "Run your code as a script, or choose one of the compatible backends: dp, ddp_spawn, ddp_sharded_spawn\n",
     "notebook-ddp-strategy"),
    # DataParallel around a generation model (the case was DDP around a UNet)
    ("    outputs = model.generate(**inputs, max_new_tokens=64)\n"
     "AttributeError: 'DataParallel' object has no attribute 'generate'\n", "ddp-wrapped-attribute"),
    # NCCL's own WARN line alone, with NCCL_DEBUG=WARN (the case was torch's DistBackendError)
    ("gpu07:3312:3390 [1] init.cc:1436 NCCL WARN Invalid config blocking attribute value -2147483648\n",
     "nccl-lib-mismatch"),
    # Horovod's TensorFlow extension (the case was its torch one)
    ("ImportError: Extension horovod.tensorflow has not been built.  If this is not expected, reinstall Horovod with "
     "HOROVOD_WITH_TENSORFLOW=1 to debug the build error.\n", "horovod-extension-missing"),
    # Click 7's quotes
    ("Usage: tune [OPTIONS] COMMAND [ARGS]...\nTry \"tune --help\" for help.\n\nError: No such command \"run\".\n",
     "cli-shadowed"),
    # a missing submodule of an installed framework: installed in another version (round 12's rule, round 22's list)
    ("ModuleNotFoundError: No module named 'mmcv._ext'\n", "import-name"),
    ("ModuleNotFoundError: No module named 'megatron.core.transformer'\n", "import-name"),
])
def test_a_second_wording_of_each_rule(text, expected):
    found = explain.explain(text)
    assert found is not None and found.signature == expected and found.retry is False


@pytest.mark.parametrize("text,not_expected", [
    # a layer's own divisibility, not the model's heads or vocabulary against the shards
    ("AssertionError: Output size must be divisible by tensor parallel size.\n", "tp-size-indivisible"),
    # Ray's placement group short of GPUs: a resource request, not a split
    ("ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement group.\n",
     "tp-size-indivisible"),
    # DeepSpeed's batch assertion names world_size too
    ("AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
     "gradient_acc_step * world_size 32 != 4 * 1 * 4\n", "world-size-indivisible"),
    # fairseq's warning when distributed is set up twice
    ("UserWarning: Distributed is already initialized, cannot initialize twice!\n", "world-size-one"),
    # torch's own words for a GPU that does not exist stay the CUDA error's family; Lightning's empty list is no GPU
    ("lightning_fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [0]\n"
     " But your machine only has: []\n", "invalid-device-ordinal"),
    # Lightning's fork check in a notebook: CUDA initialized, not the strategy
    ("RuntimeError: Lightning can't create new processes if CUDA is already initialized. Did you manually call "
     "`torch.cuda.*` functions, have moved the model to the device, or allocated memory on the GPU any other way?\n",
     "notebook-ddp-strategy"),
    # a private attribute of the wrapper itself: torch's DDP API changed under an older library, not the model's
    ("AttributeError: 'DistributedDataParallel' object has no attribute '_sync_params'\n", "ddp-wrapped-attribute"),
    # a model without the attribute: no wrapper involved
    ("AttributeError: 'LlamaForCausalLM' object has no attribute 'module'\n", "ddp-wrapped-attribute"),
    # a value the caller really set: a config error, not two libraries
    ("NCCL WARN Invalid config blocking attribute value 5\n", "nccl-lib-mismatch"),
    # Horovod built without MPI: round 16's family
    ("ValueError: MPI support has not been built.  If this is not expected, ensure MPI is installed and reinstall "
     "Horovod with HOROVOD_WITH_MPI=1 to debug the build error.\n", "horovod-extension-missing"),
    # torchtune's own argparse CLI refusing a misspelt recipe command
    ("usage: tune [-h] {download,ls,cp,run,validate,cat} ...\n"
     "tune: error: argument {download,ls,cp,run,validate,cat}: invalid choice: 'rn'\n", "cli-shadowed"),
    # another Click program genuinely without that command
    ("Usage: ray [OPTIONS] COMMAND [ARGS]...\nTry 'ray --help' for help.\n\nError: No such command 'run'.\n",
     "cli-shadowed"),
    # a module of the checkout itself, and the framework itself missing, stay module-not-found
    ("ModuleNotFoundError: No module named 'data.bert_helper'\n", "import-name"),
    ("ModuleNotFoundError: No module named 'colossalai'\n", "import-name"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_older_answers_still_stand_and_the_new_texts_are_translated():
    assert sig("RuntimeError: CUDA error: invalid device ordinal\n") == "invalid-device-ordinal"
    assert sig("ModuleNotFoundError: No module named 'colossalai'\n") == "module-not-found"
    assert sig("ValueError: MPI support has not been built.  If this is not expected, ensure MPI is installed and "
               "reinstall Horovod with HOROVOD_WITH_MPI=1 to debug the build error.\n") == "horovod-without-mpi"
    zh = FAILURES_ZH
    for s in FRAMEWORK_SIGNATURES:
        assert s.cause in zh and s.fix in zh and s.retry is False, s.name
    heads = explain.explain("ValueError: Total number of attention heads (52) must be divisible by tensor parallel "
                            "size (3).\n")
    assert "divides" in heads.fix and "num_attention_heads" in heads.fix
