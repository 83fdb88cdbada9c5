"""Code that runs on a cluster node (the node agent, its sshd, JupyterLab on the master)."""
