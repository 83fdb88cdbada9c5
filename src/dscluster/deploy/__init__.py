"""Deploying node images onto bare GPU hosts: the docker run builder, up/down, image policy."""
