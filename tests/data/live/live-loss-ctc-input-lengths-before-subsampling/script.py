"""A small speech model under DDP: a stride-2 convolution halves the frames, but CTCLoss is given the input lengths
counted in the audio's frames before the subsampling, longer than the log-probs it gets."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
VOCAB, FEAT, FRAMES = 30, 40, 60
model = DDP(torch.nn.Sequential(torch.nn.Conv1d(FEAT, 64, kernel_size=3, stride=2, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv1d(64, VOCAB, kernel_size=1)))
ctc = torch.nn.CTCLoss(blank=0, zero_infinity=True)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _step in range(3):
    audio = torch.randn(4, FEAT, FRAMES)
    frame_lengths = torch.tensor([FRAMES, 55, 50, 48])
    targets = torch.randint(1, VOCAB, (4, 10))
    target_lengths = torch.tensor([10, 9, 8, 7])
    log_probs = model(audio).permute(2, 0, 1).log_softmax(-1)  # (T/2, B, V)
    loss = ctc(log_probs, targets, frame_lengths, target_lengths)  # the mistake: lengths before the stride-2 conv
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
