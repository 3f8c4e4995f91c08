"""Trained drafters in the store: saved at every stage, found by id prefix and by folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from specadvisor.domain import TrainedDrafter, TrainPoint
from specadvisor.errors import InputError
from specadvisor.store import Store


def test_a_drafter_round_trips_and_is_found_by_prefix_and_folder(tmp_path: Path) -> None:
    with Store.open(tmp_path / "x.db") as store:
        first = TrainedDrafter(id="aaaa1111-0000-0000-0000-000000000000", target="m", folder="/d/1", curve=[TrainPoint(step=1, seconds=0.5, loss=3.0)])
        store.save_drafter(first)
        store.save_drafter(first.model_copy(update={"status": "complete", "steps": 9}))
        store.save_drafter(TrainedDrafter(id="aaaa2222-0000-0000-0000-000000000000", target="m"))
        assert store.get_drafter("aaaa1").steps == 9
        assert store.get_drafter("aaaa1").curve[0].loss == 3.0
        assert store.drafter_for_folder("/d/1") is not None and store.drafter_for_folder("/elsewhere") is None
        assert len(store.list_drafters()) == 2
        with pytest.raises(InputError, match="ambiguous"):
            store.get_drafter("aaaa")
        with pytest.raises(InputError, match="no trained drafter"):
            store.get_drafter("zz")
