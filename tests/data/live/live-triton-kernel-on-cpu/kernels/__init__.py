from .fused_gelu import fused_gelu

__all__ = ["fused_gelu"]
