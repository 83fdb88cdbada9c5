"""The user saved the whole model object with torch.save(model) in their training repo and loads it in a serving script."""
import os
import subprocess
import sys

import torch

rank = int(os.environ.get("RANK", "0"))
path = f"whole_model_rank{rank}.pt"
# what the training repo did (its models.py is not shipped with the serving script)
os.makedirs(f"train_repo_{rank}", exist_ok=True)
with open(f"train_repo_{rank}/models.py", "w") as f:
    f.write("import torch\nclass TinyNet(torch.nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.fc = torch.nn.Linear(4, 2)\n")
subprocess.run([sys.executable, "-c", "import torch, models; torch.save(models.TinyNet(), '../" + path + "')"],
               cwd=f"train_repo_{rank}", check=True)
model = torch.load(path, weights_only=False)
