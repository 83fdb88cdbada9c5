"""Pre-training a tiny Llama (built from a LlamaConfig) with DeepSpeed on packed sequences: the user builds a
block-diagonal causal mask (batch, seq, seq) so documents packed in one row do not attend to each other, and passes it
as attention_mask; transformers' masking takes a 2D (batch, seq) padding mask, or a full 4D mask."""
import deepspeed
import torch
from transformers import LlamaConfig, LlamaForCausalLM

deepspeed.init_distributed(dist_backend="gloo")
torch.manual_seed(0)
SEQ = 32

config = LlamaConfig(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128)
model = LlamaForCausalLM(config)
ds_config = {"train_micro_batch_size_per_gpu": 2, "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "torch_adam": True}}}
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)


def packed_mask(doc_lengths):
    doc = torch.repeat_interleave(torch.arange(len(doc_lengths)), torch.tensor(doc_lengths))
    same_doc = doc[:, None] == doc[None, :]
    return (same_doc & torch.ones(SEQ, SEQ, dtype=torch.bool).tril()).long()


for step in range(3):  # noqa: B007 - kept as captured
    ids = torch.randint(3, 1000, (2, SEQ))
    mask = torch.stack([packed_mask([10, 22]), packed_mask([5, 15, 12])])  # the mistake: (batch, seq, seq)
    loss = engine(input_ids=ids, attention_mask=mask, labels=ids).loss
    engine.backward(loss)
    engine.step()
