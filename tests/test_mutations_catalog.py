"""The mutation catalogue (``benchmarks/mutations.py``) stays in step with the code it mutates.

Each mutation names a line of ``src/`` by its text; an edit to that line would make the mutation vanish
silently from the catalogue's table (the compliant-ALM merge moved the AVBD joint warm start's retention
into ``vbd/rigid/data.py`` and the catalogue still named ``joints.py``). ``check_all`` raises when a
mutation's text is not found exactly once, or its tests do not exist.
"""

from benchmarks import mutations


def test_every_mutation_finds_its_text_once():
    """No tests run: the texts and test files only; each audited area keeps at least 10 mutations."""
    mutations.check_all()
    for area in ("vbd-particles", "vbd-rigid", "sleeping", "joints", "contacts"):
        assert sum(m.area == area for m in mutations.MUTATIONS) >= 10, area
