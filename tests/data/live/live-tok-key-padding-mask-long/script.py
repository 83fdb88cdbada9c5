"""The user builds a small text classifier from torch's nn.TransformerEncoder, fed by their own word-level tokenizer
through PreTrainedTokenizerFast, under plain DDP; they pass the tokenizer's attention_mask (int64, 1 = keep) straight
as src_key_padding_mask, which torch takes only as bool (True = pad) or float."""
import torch
import torch.distributed as dist
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace
from tokenizers.trainers import WordLevelTrainer
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import PreTrainedTokenizerFast

dist.init_process_group(backend="gloo")
texts = ["the film was great", "terrible acting and a boring plot", "i loved it", "not worth the time at all"]
labels = torch.tensor([1, 0, 1, 0])
raw = Tokenizer(WordLevel(unk_token="[UNK]"))
raw.pre_tokenizer = Whitespace()
raw.train_from_iterator(texts, WordLevelTrainer(special_tokens=["[PAD]", "[UNK]"]))
tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="[UNK]", pad_token="[PAD]")


class Classifier(torch.nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, 32)
        layer = torch.nn.TransformerEncoderLayer(32, 2, 64, batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, 2)
        self.head = torch.nn.Linear(32, 2)

    def forward(self, input_ids, attention_mask):
        h = self.enc(self.emb(input_ids), src_key_padding_mask=attention_mask)  # the mistake: int64 1/0 mask
        return self.head(h.mean(dim=1))


model = DDP(Classifier(len(tok)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):  # noqa: B007 - kept as captured
    batch = tok(texts, padding=True, return_tensors="pt")
    loss = torch.nn.functional.cross_entropy(model(batch["input_ids"], batch["attention_mask"]), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
