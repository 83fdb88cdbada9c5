"""The user fine-tunes a tiny GPT-2 (built from a config sized to their own BPE tokenizer) on chat turns under
DeepSpeed. They add chat-role special tokens to the tokenizer but never call model.resize_token_embeddings, so the
new tokens' ids are past the embedding table."""
import argparse

import deepspeed
from tokenizers import Tokenizer
from tokenizers.models import BPE
from tokenizers.pre_tokenizers import Whitespace
from tokenizers.trainers import BpeTrainer
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

corpus = ["hello how are you", "i am fine thank you", "what is the weather today", "it is sunny and warm"] * 8
raw = Tokenizer(BPE(unk_token="[UNK]"))
raw.pre_tokenizer = Whitespace()
raw.train_from_iterator(corpus, BpeTrainer(vocab_size=150, special_tokens=["[UNK]", "<|endoftext|>"]))
tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]", eos_token="<|endoftext|>")
model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=len(tok), n_positions=64))
tok.add_special_tokens({"pad_token": "<pad>", "additional_special_tokens": ["<|user|>", "<|assistant|>"]})
# the mistake: no model.resize_token_embeddings(len(tok)) after adding tokens
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
chats = ["<|user|> hello how are you <|assistant|> i am fine thank you",
         "<|user|> what is the weather today <|assistant|> it is sunny and warm"]
for step in range(3):  # noqa: B007 - kept as captured
    batch = tok(chats, padding=True, return_tensors="pt")
    loss = engine(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["input_ids"]).loss
    engine.backward(loss)
    engine.step()
