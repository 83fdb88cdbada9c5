"""The user pre-trains a tiny BERT (MLM) with plain DDP; the config keeps max_position_embeddings=64 to stay small,
but the data is tokenized with padding/truncation to max_length=128, longer than the model's positions."""
import torch
import torch.distributed as dist
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace
from tokenizers.trainers import WordLevelTrainer
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import BertConfig, BertForMaskedLM, DataCollatorForLanguageModeling, PreTrainedTokenizerFast

dist.init_process_group(backend="gloo")
corpus = ["the cat sat on the mat", "a dog ran fast", "the quick brown fox jumps over the lazy dog",
          "birds sing in the morning"] * 8
raw = Tokenizer(WordLevel(unk_token="[UNK]"))
raw.pre_tokenizer = Whitespace()
raw.train_from_iterator(corpus, WordLevelTrainer(special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                              sep_token="[SEP]", mask_token="[MASK]")
config = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64)
model = DDP(BertForMaskedLM(config))
features = [tok(t, padding="max_length", truncation=True, max_length=128) for t in corpus]  # the mistake: 128 > 64
loader = torch.utils.data.DataLoader(features, batch_size=4,
                                     collate_fn=DataCollatorForLanguageModeling(tok, mlm_probability=0.15))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for batch in loader:
    loss = model(**batch).loss
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
