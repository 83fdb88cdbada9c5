"""What a run looks like to whoever asks: its summary, its checkpoints, its logs streamed, its ranks'
stacks, its figures for Prometheus."""
