"""The SolverVBD benchmark's ``--cases`` list (benchmarks/vbd.py): ``name=size`` items or bare listed names."""

import pytest

from benchmarks import vbd


def test_cases_take_sizes_or_every_listed_size_of_a_bare_name():
    assert vbd._cases("cloth=32, soft_cube=4") == [("cloth", 32), ("soft_cube", 4)]
    assert vbd._cases("cloth_boxes_full") == [("cloth_boxes_full", 32)]
    assert vbd._cases("cloth_hang,") == [("cloth_hang", 16), ("cloth_hang", 32), ("cloth_hang", 64)]


@pytest.mark.parametrize("text, words", [("nope", "'nope' has no listed size"),
                                         ("cloth=big", "size of 'cloth' must be an int, got 'big'")])
def test_bad_cases_name_the_item(text, words):
    with pytest.raises(ValueError, match=words):
        vbd._cases(text)
