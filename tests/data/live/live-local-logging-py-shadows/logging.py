"""The project's logging setup: one format for every rank."""
import logging
import os

FORMAT = "%(asctime)s rank" + os.environ.get("RANK", "0") + " %(levelname)s %(message)s"
logger = logging.getLogger("train")


def setup(level="INFO"):
    logging.basicConfig(format=FORMAT, level=level)
    return logger
