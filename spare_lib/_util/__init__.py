"""Private helpers shared by every layer: input validation and seeding (the bottom layer)."""

from spare_lib._util.rng import SeedLike, as_seed_sequence, chunk_generators
from spare_lib._util.validate import check_int, check_positive, check_probability

__all__ = ["SeedLike", "as_seed_sequence", "chunk_generators", "check_int", "check_positive",
           "check_probability"]
