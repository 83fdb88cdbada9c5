"""The user fine-tunes their 2-label classifier for a new 5-label task: from_pretrained(dir, num_labels=5)."""
import os

import transformers

rank = int(os.environ.get("RANK", "0"))
out = f"sentiment_rank{rank}"
cfg = transformers.BertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64,
                              vocab_size=100, num_labels=2)
transformers.BertForSequenceClassification(cfg).save_pretrained(out)
model = transformers.BertForSequenceClassification.from_pretrained(out, num_labels=5)
