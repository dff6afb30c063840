"""Similo benchmark reader and runner: a synthetic dataset and the real dev half."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.bench import BenchReport, format_report, run_similo_benchmark
from core.bench.similo import load_app, read_properties, widget_descriptor
from core.domain import BBox
from core.locate import LocatorConfig

#: The dev half of the Similo replication package, vendored (compressed) in resources/benchmarks/.
SIMILO_ARCHIVE = Path(__file__).resolve().parents[3] / "resources" / "benchmarks" / "similo-dev.tar.xz"

UL = "/html[1]/body[1]/div[1]/ul[1]"


def write_widget(folder: Path, name: str, **props: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.properties").write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")


def write_pair(app: Path, n: int, old: str, new: str) -> None:
    app.mkdir(parents=True, exist_ok=True)
    (app / f"{n}.properties").write_text(f"old_xpath={old}\nnew_xpath={new}\n", encoding="utf-8")


def make_dataset(root: Path) -> Path:
    """One app with a located, a wrong and an abstained pair, plus pairs that do not count."""
    app = root / "Shop"
    t, c = app / "target_widgets", app / "candidate_widgets"
    # 1. "Sign in" moved into another list: located.
    write_widget(t, "t1", tag="A", text="Sign in", xpath=f"{UL}/li[1]/a[1]", x="10", y="10", width="60",
                 height="20", href="https://shop.example/login", neighbor_text_right="Help")
    write_widget(c, "c1", tag="A", text="Sign in", xpath="/html[1]/body[1]/header[1]/nav[1]/a[2]", x="900",
                 y="12", width="60", height="20", href="https://shop.example/login")
    # 2. The link "Help" became "Support"; another "Help" (a heading) is picked: wrong.
    write_widget(t, "t2", tag="A", text="Help", xpath=f"{UL}/li[2]/a[1]")
    write_widget(c, "c2", tag="A", text="Support", xpath="/html[1]/body[1]/header[1]/nav[1]/a[3]")
    write_widget(c, "c3", tag="A", text="Help", xpath="/html[1]/body[1]/footer[1]/a[1]")
    # 3. Two identical "Delete" links either side of the old place: abstained.
    write_widget(t, "t3", tag="A", text="Delete", xpath="/html[1]/body[1]/div[1]/ol[1]/li[2]/a[1]")
    write_widget(c, "c4", tag="A", text="Delete", xpath="/html[1]/body[1]/div[1]/ol[1]/li[1]/a[1]")
    write_widget(c, "c5", tag="A", text="Delete", xpath="/html[1]/body[1]/div[1]/ol[1]/li[3]/a[1]")
    # A multi-line class value (the package did not escape it) and a duplicate record of c1.
    (c / "c6.properties").write_text(
        "tag=BUTTON\nclass=btn primary\n      wide\ntext=Buy\nxpath=/html[1]/body[1]/main[1]/button[1]\n",
        encoding="utf-8")
    write_widget(c, "c7", tag="A", text="Sign in", xpath="/html[1]/body[1]/header[1]/nav[1]/a[2]")
    write_pair(app, 0, f"{UL}/li[1]/a[1]", "/html/body/header/nav/a[2]")  # matches once [1] are dropped?
    write_pair(app, 1, f"{UL}/li[1]/a[1]", "/html[1]/body[1]/header[1]/nav[1]/a[2]")
    write_pair(app, 2, f"{UL}/li[2]/a[1]", "/html[1]/body[1]/header[1]/nav[1]/a[3]")
    write_pair(app, 3, "/html[1]/body[1]/div[1]/ol[1]/li[2]/a[1]", "/html[1]/body[1]/div[1]/ol[1]/li[3]/a[1]")
    write_pair(app, 4, "/html[1]/body[1]/nowhere[1]", "/html[1]/body[1]/header[1]/nav[1]/a[2]")  # no target
    # An app whose widgets were not published adds no pairs.
    write_pair(root / "Empty", 0, "/html[1]/body[1]/a[1]", "/html[1]/body[1]/a[2]")
    return root


def test_read_properties_handles_continuations_and_escapes(tmp_path: Path) -> None:
    p = tmp_path / "w.properties"
    p.write_text("# comment\ntag=A\nclass=one\n    two\ntext=caf\\u00e9 \\= ok\nlong=a\\\n  b\nempty=\n",
                 encoding="utf-8")
    props = read_properties(p)
    assert props == {"tag": "A", "class": "one two", "text": "café = ok", "long": "ab", "empty": ""}


def test_widget_descriptor_conversion() -> None:
    d = widget_descriptor({
        "tag": "INPUT", "type": "submit", "value": "Search", "class": "btn  big", "id": "go", "name": "q",
        "x": "10", "y": "20", "width": "30", "height": "40", "is_button": "yes", "visible_text": "",
        "neighbor_text_left": "Find", "neighbor_text": "Find Search", "xpath": "/html[1]/body[1]/input[1]",
        "href": " ", "alt": "", "idxpath": "ignored",
    })
    assert (d.tag, d.type, d.name, d.role, d.id, d.name_attr) == ("input", "submit", "Search", "button", "go", "q")
    assert d.classes == ("btn", "big")
    assert d.bbox == BBox(10, 20, 30, 40)
    assert d.neighbours == ("Find", "Find Search")
    assert d.label_text == "Search"
    assert widget_descriptor({"tag": "A", "text": "x"}).bbox is None


def test_load_app_counts_only_pairs_with_widgets(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "ds")
    app = load_app(root / "Shop")
    assert len(app.pairs) == 3  # pair 0 has no exact new_xpath, pair 4 no target widget
    assert len(app.candidates) == 6  # c7 repeats c1's xpath
    buy = [c for c in app.candidates if c.descriptor.text == "Buy"][0]
    assert buy.descriptor.classes == ("btn", "primary", "wide")
    assert load_app(root / "Empty").pairs == ()


def test_synthetic_benchmark_counts_located_wrong_and_abstained(tmp_path: Path) -> None:
    report = run_similo_benchmark(make_dataset(tmp_path / "ds"))
    assert isinstance(report, BenchReport)
    assert (report.pairs, report.located, report.wrong, report.abstained) == (3, 1, 1, 1)
    assert report.accuracy == 1 / 3
    assert report.ms_per_target >= 0.0
    assert [(r.app, r.pairs) for r in report.apps] == [("Shop", 3)]
    kinds = {o.old_xpath: o.outcome for o in report.outcomes}
    assert kinds[f"{UL}/li[1]/a[1]"] == "located"
    assert kinds[f"{UL}/li[2]/a[1]"] == "wrong"
    assert kinds["/html[1]/body[1]/div[1]/ol[1]/li[2]/a[1]"] == "abstained"
    data = report.to_json_dict()
    assert set(data) == {"pairs", "located", "wrong", "abstained", "accuracy", "ms_per_target", "levels",
                         "role_crossing"}
    assert [lv["level"] for lv in data["levels"]] == ["exact", "fuzzy_text", "semantic", "relative", "visual"]
    assert sum(lv["located"] for lv in data["levels"]) == 1 and sum(lv["wrong"] for lv in data["levels"]) == 1
    assert data["role_crossing"] == 0
    json.dumps(data)
    text = format_report(report)
    assert "Shop" in text and "published reference" in text and "92.8%" in text and "7.2%" in text
    assert "role-crossing picks: 0" in text and "relative" in text


def test_folds_split_sites_and_add_up(tmp_path: Path) -> None:
    from core.bench.similo import site_folds

    assert site_folds(["b", "a", "d", "c", "e"], 2) == [("a", "c", "e"), ("b", "d")]
    with pytest.raises(ValueError):
        site_folds(["a"], 1)
    root = make_dataset(tmp_path / "ds")
    for extra in ("Alpha", "Beta"):  # two more sites, each with one located pair
        app = root / extra
        write_widget(app / "target_widgets", "t", tag="A", text="Home", xpath="/html[1]/body[1]/a[1]")
        write_widget(app / "candidate_widgets", "c", tag="A", text="Home", xpath="/html[1]/body[1]/nav[1]/a[1]")
        write_pair(app, 0, "/html[1]/body[1]/a[1]", "/html[1]/body[1]/nav[1]/a[1]")
    report = run_similo_benchmark(root, folds=2)
    assert len(report.folds) == 2
    assert sorted(a for f in report.folds for a in f.apps) == ["Alpha", "Beta", "Shop"]
    assert sum(f.pairs for f in report.folds) == report.pairs == 5
    assert sum(f.located for f in report.folds) == report.located == 3
    assert sum(f.wrong for f in report.folds) == report.wrong
    assert report.to_json_dict()["folds"][0]["apps"] == ["Alpha", "Shop"]
    assert "leave-sites-out" in format_report(report)


def test_real_dev_half_of_the_similo_package() -> None:
    from core.bench.dataset import open_dataset

    with open_dataset(Path(os.environ.get("STEADYHAND_SIMILO_DEV", SIMILO_ARCHIVE))) as folder:
        report = run_similo_benchmark(folder, config=LocatorConfig())
    assert report.pairs == 318
    assert report.located + report.wrong + report.abstained == 318
    assert report.accuracy == report.located / 318
    # Regression guard: at most 1 % silent wrong picks (Similo: 23, 7.2 %), most pairs located.
    assert report.wrong <= 3
    # 279, not 280, since a name changed only in case is a heal, not an exact match: the one pair whose renamed
    # link ('Open An Account' -> three copies of 'Open an Account', no box, no href) only the page region told
    # apart now abstains instead of being clicked.
    assert report.located >= 279
    assert sum(lv.located for lv in report.levels) == report.located
    assert sum(lv.wrong for lv in report.levels) == report.wrong


def test_bench_locate_command_prints_levels_and_folds(tmp_path: Path, capsys) -> None:
    from core.cli import main

    root = make_dataset(tmp_path / "ds")
    app = root / "Alpha"
    write_widget(app / "target_widgets", "t", tag="A", text="Home", xpath="/html[1]/body[1]/a[1]")
    write_widget(app / "candidate_widgets", "c", tag="A", text="Home", xpath="/html[1]/body[1]/nav[1]/a[1]")
    write_pair(app, 0, "/html[1]/body[1]/a[1]", "/html[1]/body[1]/nav[1]/a[1]")
    out = tmp_path / "locate.json"
    assert main(["bench", "locate", "--dataset", str(root), "--folds", "2", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "role-crossing picks" in text and "leave-sites-out" in text
    data = json.loads(out.read_text())
    assert data["pairs"] == 4 and len(data["folds"]) == 2 and data["levels"][0]["level"] == "exact"
    assert main(["bench", "locate", "--dataset", str(root), "--folds", "1"]) == 2
