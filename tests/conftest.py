"""Fixtures every test module shares."""

import pytest

import split_chains


@pytest.fixture(autouse=True)
def _chains_in_one_process_while_patched(request):
    """A test that uses ``monkeypatch`` runs its exactness chains in this process only: a
    worker process would run the code unpatched (:mod:`split_chains`)."""
    if "monkeypatch" not in request.fixturenames:
        yield
        return
    split_chains.ONE_PROCESS = True
    try:
        yield
    finally:
        split_chains.ONE_PROCESS = False
