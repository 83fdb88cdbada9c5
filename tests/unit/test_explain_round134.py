"""Round 134's rules (issue 45), from threads of distributed training of recommendation and graph models (TorchRec
with fbgemm_gpu, PyTorch Geometric under PyTorch Lightning's DDP, DGL's distributed launch): fbgemm_gpu of another
release than its torch or TorchRec (torch/_ops.py's words for an fbgemm operator never registered, fbgemm_gpu's
library failing to load, TorchRec reading fbgemm_gpu's optimizer API of another release), Lightning re-creating a
DataLoader subclass to inject a DistributedSampler, and PyG's heterogeneous sampler meeting a type its maps lack. Each:
a second wording (another version's or caller's words than the corpus case it was written from) and near misses, other
components' text with like words that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("fbgemm-version-mismatch", "dataloader-reinit-for-sampler", "pyg-hetero-sampler-key-missing")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # torch nightly with fbgemm_gpu_nightly (pytorch/FBGEMM#1618): the operator lookup's cause, then its words
    ('Traceback (most recent call last):\n'
     '  File "/usr/local/lib/python3.10/dist-packages/torch/_ops.py", line 562, in __getattr__\n'
     '    op, overload_names = torch._C._jit_get_operation(qualified_op_name)\n'
     'RuntimeError: No such operator fbgemm::merge_pooled_embeddings\n'),
    # torch 1.13+'s words, the namespace named (torchrec#770, a stable torchrec against another torch)
    ('  File "/home/u/miniconda3/envs/dlrm/lib/python3.10/site-packages/torch/_ops.py", line 505, in __getattr__\n'
     '    raise AttributeError(\n'
     "AttributeError: '_OpNamespace' 'fbgemm' object has no attribute 'jagged_2d_to_dense'\n"),
    # fbgemm_gpu's library built for another torch, in glibc's words (torchrec#551)
    ("OSError: /home/user/anaconda3/envs/torchrec/lib/python3.10/site-packages/fbgemm_gpu/fbgemm_gpu_py.so: undefined "
     "symbol: _ZNR5torch7Library4_defEON3c1014FunctionSchemaEPNS1_12OperatorNameE\n"),
    # the reverse API step: torchrec 1.2 with an older fbgemm_gpu (torchrec#3099)
    ('  File "torchrec/distributed/batched_embedding_kernel.py", line 1310, in __init__\n'
     '    self._optim: EmbeddingFusedOptimizer = EmbeddingFusedOptimizer(\n'
     "AttributeError: 'SplitTableBatchedEmbeddingBagsCodegen' object has no attribute 'get_learning_rate'\n"),
    # torchx's per-rank prefix over the DLRM example (torchrec#3170)
    ("train_dlrm/0 [0]:AttributeError: 'OptimizerArgs' object has no attribute 'learning_rate'\n"),
])
def test_fbgemm_of_another_release(text):
    assert sig(text) == "fbgemm-version-mismatch"


@pytest.mark.parametrize("text", [
    # torchvision's C++ ops of another torch build: another library's operators (pytorch/vision threads)
    "AttributeError: '_OpNamespace' 'torchvision' object has no attribute 'nms'\n",
    "RuntimeError: No such operator torchvision::nms\n",
    # an older torch's words for another library's operator: only fbgemm_gpu's own operator names are read
    "AttributeError: '_OpNamespace' object has no attribute 'roi_align'\n",
    # another extension's undefined symbol (flash-attn built for another torch)
    ("ImportError: /opt/venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined "
     "symbol: _ZN3c104cuda9SetDeviceEi\n"),
])
def test_other_libraries_operators_are_not_fbgemm(text):
    assert sig(text) != "fbgemm-version-mismatch"


@pytest.mark.parametrize("text", [
    # Lightning 1.6+'s own words for the same re-creation (lightning/pytorch/utilities/data.py
    # _dataloader_init_kwargs_resolve_sampler), a loader subclass whose __init__ arguments are not its attributes
    ("lightning.fabric.utilities.exceptions.MisconfigurationException: Trying to inject custom `Sampler` into the "
     "`NeighborLoader` instance. This would fail as some of the `__init__` arguments are not available as instance "
     "attributes. The missing attributes are ['data', 'num_neighbors']. If you instantiate your `NeighborLoader` "
     "inside a `*_dataloader` hook of your module, we will do this for you. Otherwise, define `self.data`, "
     "`self.num_neighbors` inside your `__init__`.\n"),
    # ... and a subclass whose __init__ does not take DataLoader's keywords
    ("pytorch_lightning.utilities.exceptions.MisconfigurationException: Trying to inject parameters into the "
     "`GraphLoader` instance. This would fail as it doesn't expose all its attributes in the `__init__` signature. "
     "The missing arguments are ['sampler']. HINT: If you wrote the `GraphLoader` class, add the `__init__` arguments "
     "or allow passing `**kwargs`\n"),
    # the raw TypeError for another of DataLoader's arguments
    ('  File "/opt/venv/lib/python3.8/site-packages/pytorch_lightning/trainer/data_loading.py", line 232, in '
     'replace_sampler\n'
     '    dataloader = type(dataloader)(**dl_args)\n'
     "TypeError: __init__() got multiple values for argument 'sampler'\n"),
])
def test_a_loader_subclass_recreated_for_a_distributed_sampler(text):
    assert sig(text) == "dataloader-reinit-for-sampler"


@pytest.mark.parametrize("text", [
    # the same Python words for another argument: a model passed twice to a trainer class
    "TypeError: Trainer.__init__() got multiple values for argument 'model'\n",
    # a loader given a keyword its class does not take: no re-creation by Lightning shown
    "TypeError: __init__() got an unexpected keyword argument 'dataset'\n",
    # Lightning's other injection, into a batch sampler while predicting (a warning, not this failure)
    ("UserWarning: Trying to inject `drop_last=False` into batch sampler since you are predicting, however it seems "
     "the class `BucketBatchSampler` does not support it. Your predictions might be incomplete.\n"),
])
def test_other_init_refusals_are_not_the_sampler_injection(text):
    assert sig(text) != "dataloader-reinit-for-sampler"


def test_a_later_pyg_sampler_missing_a_type():
    # PyG 2.3+: the sampler module calls pyg-lib's hetero_neighbor_sample
    text = ('  File "/opt/venv/lib/python3.10/site-packages/torch_geometric/loader/node_loader.py", line 147, in '
            'collate_fn\n'
            '    out = self.node_sampler.sample_from_nodes(index)\n'
            '  File "/opt/venv/lib/python3.10/site-packages/torch_geometric/sampler/neighbor_sampler.py", line 172, in '
            'sample_from_nodes\n'
            '    out = node_sample(inputs, self._sample)\n'
            '  File "/opt/venv/lib/python3.10/site-packages/torch_geometric/sampler/neighbor_sampler.py", line 380, in '
            '_sample\n'
            '    out = torch.ops.pyg.hetero_neighbor_sample(\n'
            '  File "/opt/venv/lib/python3.10/site-packages/torch/_ops.py", line 755, in __call__\n'
            '    return self._op(*args, **(kwargs or {}))\n'
            'IndexError: _Map_base::at\n')
    assert sig(text) == "pyg-hetero-sampler-key-missing"


@pytest.mark.parametrize("text", [
    # the C++ words alone, from any extension: nothing shows PyG's sampler
    "IndexError: _Map_base::at\n",
    ('  File "/opt/venv/lib/python3.9/site-packages/dgl/sampling/neighbor.py", line 361, in sample_neighbors\n'
     '    return _sample_neighbors(\n'
     "IndexError: _Map_base::at\n"),
    # another error under PyG's sampler: an index beyond the graph (an embedding's own words)
    ('  File "/opt/venv/lib/python3.9/site-packages/torch_geometric/loader/neighbor_loader.py", line 219, in '
     'hetero_sample\n'
     '    self.directed,\n'
     "IndexError: index out of range in self\n"),
])
def test_other_map_lookups_are_not_pyg_sampler_types(text):
    assert sig(text) != "pyg-hetero-sampler-key-missing"
