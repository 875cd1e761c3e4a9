"""What a GM transfer occupies by its shape (runtime/transfer_shape.py, hw_costs.md §1)."""
import pytest

from pypto.machine.spec import load
from pypto.runtime.transfer_shape import Path, transfer_bytes

RULES = load("a2a3").dma["shape"]
BURST = RULES["burst_overhead_bytes"]
ND2NZ = RULES["nd2nz_row_bytes"]


@pytest.mark.parametrize("row_bytes, occupied", [(32, 128), (128, 128), (130, 256), (256, 256),
                                                 (300, 512), (512, 512), (600, 640),
                                                 (2048, 2048)])
def test_a_burst_fills_whole_128_256_512_byte_pieces(row_bytes, occupied):
    """One row of a box that does not span the tensor's rows: one burst, its pieces rounded up."""
    assert transfer_bytes((1, row_bytes // 2), (8, 4096), 2, Path.CONTIGUOUS, RULES) \
        == occupied + BURST


def test_a_vector_copy_merges_rows_that_are_contiguous_in_gm():
    """A box spanning whole inner rows is one burst; a strided box is one burst per row."""
    whole = transfer_bytes((64, 64), (1024, 64), 4, Path.CONTIGUOUS, RULES)
    strided = transfer_bytes((64, 64), (1024, 128), 4, Path.CONTIGUOUS, RULES)
    assert whole == 64 * 64 * 4 + BURST
    assert strided == 64 * (256 + BURST)


def test_a_cube_load_of_an_nd_tensor_goes_row_by_row_with_its_reordering():
    """ND2NZ: every row is a burst plus a reordering granule, even when GM holds the rows
    back to back; the narrow (884736,16) BF16 operand pays 172 bytes per 32-byte row."""
    assert transfer_bytes((128, 16), (884736, 16), 2, Path.ND2NZ, RULES) \
        == 128 * (128 + BURST + ND2NZ)
    assert transfer_bytes((128, 16), (884736, 16), 2, Path.NZ2ND, RULES) == 128 * (128 + BURST)


def test_an_nz_weight_moves_as_contiguous_column_blocks():
    """A [256, 64] FP16 tile of an NZ tensor: 4 blocks of 16 columns, each 256 rows x 32 B."""
    nz = transfer_bytes((256, 64), (2048, 1024), 2, Path.FRACTAL, RULES)
    nd = transfer_bytes((256, 64), (2048, 1024), 2, Path.ND2NZ, RULES)
    assert nz == 4 * (256 * 32 + BURST)
    assert nd == 256 * (128 + BURST + ND2NZ)
    assert nd > 1.3 * nz     # 128-byte ND rows: PyPTO measured a 16-25 % penalty


def test_long_aligned_transfers_occupy_what_they_carry():
    big = 128 * 1024 * 4
    assert transfer_bytes((128, 1024), (128, 1024), 4, Path.CONTIGUOUS, RULES) \
        == pytest.approx(big, rel=1e-4)


def test_an_empty_box_moves_nothing():
    assert transfer_bytes((0, 64), (16, 64), 4, Path.CONTIGUOUS, RULES) == 0.0
