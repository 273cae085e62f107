"""Cast-vote records as election offices publish them (:func:`dpclust.io.read_cvr`): messy
files written here, each read as meant -- the exact rankings and the exact counts of every
cleaning rule -- or refused with one line naming the path, the line and the cell."""

from __future__ import annotations

import gzip
import pickle

import numpy as np
import pytest

from dpclust.io import CleaningRule, DataError, read_cvr
from dpclust.rankings import Rankings


def write(tmp_path, name, text, *, newline="\n"):
    path = tmp_path / name
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return path


def rules_of(cvr) -> dict:
    return {rule.rule: rule.count for rule in cvr.cleaning}


def sentences_of(cvr) -> list:
    return [rule.sentence for rule in cvr.cleaning]


# A NYC-style file: ballot id and precinct columns, ``Choice N`` columns with markers.
NYC = """Cast Vote Record,Precinct,DEM Mayor Choice 1 of 4,DEM Mayor Choice 2 of 4,DEM Mayor Choice 3 of 4,DEM Mayor Choice 4 of 4
101,P1,Adams,Garcia,Wiley,undervote
102,P1,Adams,Adams,Garcia,undervote
103,P2,undervote,Garcia,Adams,undervote
104,P2,overvote,Garcia,undervote,undervote
105,P2,Garcia,overvote,Adams,undervote
106,P1,Write-in,Adams,undervote,undervote
107,P1,undervote,undervote,undervote,undervote
108,P2,Wiley,undervote,undervote,Garcia
"""


# --------------------------------------------------------------------------------------------
# the rules


def test_a_nyc_style_file_is_read_by_the_default_rules(tmp_path):
    cvr = read_cvr(write(tmp_path, "nyc.csv", NYC))
    r = cvr.rankings
    assert r.items == ("Adams", "Garcia", "Wiley", "Write-in")
    assert r.to_lists() == [["Adams", "Garcia", "Wiley"], ["Adams", "Garcia"],
                            ["Garcia", "Adams"], ["Garcia"], ["Write-in", "Adams"],
                            ["Wiley", "Garcia"]]
    assert r.groups is None
    assert cvr.n_ballots == 8
    assert rules_of(cvr) == {"write_in": 1, "duplicate": 1, "skipped": 2, "overvote": 2,
                             "empty": 2}
    assert sentences_of(cvr)[1:3] == [
        "1 ballot ranked a candidate twice: the later copies were dropped",
        "2 ballots skipped a rank and ranked later candidates: the later choices were moved "
        "up (rule 'skip'; skipped='exhaust' stops the ranking at the first skip instead)"]
    assert sentences_of(cvr)[4] == ("2 ballots ranked no candidate (after the rules above): "
                                    "left out")
    assert "ignored columns 'Cast Vote Record', 'Precinct'" in cvr.layout
    assert cvr.rules == "skipped ranks: 'skip'; overvotes: 'exhaust'; write-ins: 'candidate'"
    assert all(isinstance(rule, CleaningRule) for rule in cvr.cleaning)


def test_skipped_rank_exhausts_under_the_other_rule(tmp_path):
    cvr = read_cvr(write(tmp_path, "nyc.csv", NYC), skipped="exhaust")
    assert cvr.rankings.to_lists() == [["Adams", "Garcia", "Wiley"], ["Adams", "Garcia"],
                                       ["Garcia"], ["Write-in", "Adams"], ["Wiley"]]
    assert rules_of(cvr) == {"write_in": 1, "duplicate": 1, "skip_exhausted": 2,
                             "overvote": 2, "empty": 3}
    assert ("2 ballots skipped a rank and ranked later candidates: the ranking stops at the "
            "skip (rule 'exhaust'; skipped='skip' moves the later choices up instead)"
            in sentences_of(cvr))


def test_maine_rule_passes_one_skip_and_stops_at_two(tmp_path):
    path = write(tmp_path, "me.csv", "1st choice,2nd choice,3rd choice,4th choice\n"
                                     "A,,B,\n"
                                     "A,,,B\n"
                                     "B,A,,\n"
                                     "C,,,\n")
    cvr = read_cvr(path, skipped="skip-one")
    assert cvr.rankings.to_lists() == [["A", "B"], ["A"], ["B", "A"], ["C"]]
    assert rules_of(cvr) == {"skipped": 1, "skip_exhausted": 1}


def test_overvote_can_be_passed_over(tmp_path):
    cvr = read_cvr(write(tmp_path, "nyc.csv", NYC), overvote="skip")
    assert cvr.rankings.to_lists()[3:5] == [["Garcia"], ["Garcia", "Adams"]]
    assert rules_of(cvr)["overvote"] == 2
    assert ("2 ballots had an overvote: it was passed over (rule 'skip'; overvote='exhaust' "
            "ends the ranking before it instead)" in sentences_of(cvr))


def test_write_ins_are_one_candidate_or_dropped(tmp_path):
    path = write(tmp_path, "w.csv", "rank1,rank2,rank3\n"
                                    "Write-in (Zed Q),A,B\n"
                                    "UWI,B,\n"
                                    "A,writein,B\n"
                                    "A,Write-in: Mo,\n"
                                    "B,A,\n")
    cvr = read_cvr(path)
    assert cvr.rankings.items == ("A", "B", "Write-in")
    assert cvr.rankings.to_lists() == [["Write-in", "A"], ["Write-in", "B"],
                                       ["A", "Write-in"], ["A", "Write-in"], ["B", "A"]]
    assert rules_of(cvr) == {"write_in": 4, "complete": 2}
    dropped = read_cvr(path, write_ins="drop")
    assert dropped.rankings.items == ("A", "B")
    assert dropped.rankings.to_lists() == [["A"], ["B"], ["A"], ["A"], ["B"]]
    assert rules_of(dropped) == {"write_in": 4, "skipped": 3, "complete": 3}
    assert sentences_of(dropped)[0] == (
        "4 ballots ranked a write-in: read as a skipped rank (rule 'drop'; "
        "write_ins='candidate' reads them as the candidate 'Write-in' instead)")


def test_markers_are_read_whatever_their_case_and_spaces_and_missing_adds_more(tmp_path):
    path = write(tmp_path, "m.csv", "Rank_1,Rank_2,Rank_3\n"
                                    "  A , Under Vote ,B\n"
                                    "SKIPPED,B,OVER-VOTE\n"
                                    "A,n/a,\n"
                                    "blank,A,C\n")
    cvr = read_cvr(path, missing="N/A", candidates=["A", "B", "C"])
    assert cvr.rankings.to_lists() == [["A", "B"], ["B"], ["A"], ["A", "C"]]
    assert rules_of(cvr) == {"skipped": 3, "overvote": 1}


def test_a_ballot_ranking_every_candidate_is_counted(tmp_path):
    path = write(tmp_path, "c.csv", "pref 1,pref 2,pref 3\nA,B,C\nC,B,A\nA,,\n")
    cvr = read_cvr(path)
    assert cvr.rankings.to_lists() == [["A", "B"], ["C", "B"], ["A"]]
    assert cvr.cleaning == (CleaningRule(
        "complete", 2, "2 ballots ranked every candidate: the last choice is implied and "
                       "not stored"),)


def test_an_all_blank_ballot_is_left_out_and_all_blank_is_refused(tmp_path):
    path = write(tmp_path, "b.csv", "Choice 1,Choice 2\n,\nA,B\n\"\",\"\"\n")
    cvr = read_cvr(path)
    assert cvr.rankings.to_lists() == [["A"]]
    assert rules_of(cvr) == {"empty": 2, "complete": 1}
    blank = write(tmp_path, "blank.csv", "Choice 1,Choice 2\nundervote,\nskipped,skipped\n")
    with pytest.raises(DataError, match=r"blank\.csv: no ballot ranks a candidate$"):
        read_cvr(blank)


# --------------------------------------------------------------------------------------------
# columns: ranks, extra columns, groups, counts


@pytest.mark.parametrize("header", [
    "rank1,rank2,rank3", "Rank 1,Rank 2,Rank 3", "Choice_1,Choice_2,Choice_3",
    "1st choice,2nd choice,3rd choice", "pref 1,pref 2,pref 3",
    "First Choice,Second Choice,Third Choice", "Rep. 1st Choice D2,Rep. 2nd Choice D2,"
    "Rep. 3rd Choice D2"])
def test_rank_columns_are_found_by_their_header(tmp_path, header):
    cvr = read_cvr(write(tmp_path, "h.csv", f"{header}\nB,A,\nC,,\n"))
    assert cvr.rankings.to_lists() == [["B", "A"], ["C"]]


def test_rank_columns_are_ordered_by_their_number_not_their_place(tmp_path):
    path = write(tmp_path, "o.csv", "Rank 2,id,Rank 1\nA,7,B\n,8,C\n")
    assert read_cvr(path).rankings.to_lists() == [["B", "A"], ["C"]]


def test_a_precinct_column_is_kept_as_a_grouping(tmp_path):
    cvr = read_cvr(write(tmp_path, "nyc.csv", NYC), group="precinct")
    r = cvr.rankings
    assert r.group_name == "Precinct"
    assert r.groups.tolist() == ["P1", "P1", "P2", "P2", "P1", "P2"]
    assert r[np.array([1, 2])].groups.tolist() == ["P1", "P2"]
    back = pickle.loads(pickle.dumps(r))
    assert back.groups.tolist() == r.groups.tolist() and back.group_name == "Precinct"
    assert "grouped by 'Precinct'; ignored columns 'Cast Vote Record'" in cvr.layout


def test_a_count_column_weights_the_ballots_and_the_rules(tmp_path):
    path = write(tmp_path, "n.csv", "Rank 1,Rank 2,Rank 3,Count,Ward\n"
                                    "A,A,B,412,W1\n"
                                    "B,,A,37,W2\n"
                                    "overvote,B,,12,W1\n"
                                    ",,,5,W2\n"
                                    "B,C,A,88,W1\n")
    cvr = read_cvr(path, group="Ward")
    r = cvr.rankings
    assert len(r) == 412 + 37 + 88 and cvr.n_ballots == 554
    assert r[0].tolist() == [0, 1] and r[412].tolist() == [1, 0] and r[449].tolist() == [1, 2]
    assert np.unique(r.groups[:412]).tolist() == ["W1"]
    assert rules_of(cvr) == {"duplicate": 412, "skipped": 37, "overvote": 12, "empty": 17,
                             "complete": 88}
    assert sentences_of(cvr) == [
        "412 ballots ranked a candidate twice: the later copies were dropped",
        "37 ballots skipped a rank and ranked later candidates: the later choices were moved "
        "up (rule 'skip'; skipped='exhaust' stops the ranking at the first skip instead)",
        "12 ballots had an overvote: the ranking ends before it (rule 'exhaust'; "
        "overvote='skip' passes over it instead)",
        "17 ballots ranked no candidate (after the rules above): left out",
        "88 ballots ranked every candidate: the last choice is implied and not stored"]
    assert "ballot counts in 'Count'" in cvr.layout


def test_several_contests_are_told_apart_by_contest(tmp_path):
    text = ("Mayor Choice 1,Mayor Choice 2,Comptroller Choice 1,Comptroller Choice 2\n"
            "A,B,X,Y\nB,,Y,\n")
    path = write(tmp_path, "two.csv", text)
    with pytest.raises(DataError, match=r"two\.csv: line 1: columns 'Mayor Choice 1' \(1\) and "
                                        r"'Comptroller Choice 1' \(3\) both hold rank 1; .*"
                                        r"contest="):
        read_cvr(path)
    assert read_cvr(path, contest="comptroller").rankings.to_lists() == [["X"], ["Y"]]


# --------------------------------------------------------------------------------------------
# count: ballot lines and ABIF


def test_count_ballot_lines_are_read_once_each(tmp_path):
    path = write(tmp_path, "lines.txt", "# a comment\n"
                                        "1000000: Alice > Bob > Alice\n"
                                        "3:Bob>Carol\n"
                                        "2: Carol, , Alice\n"
                                        "4: overvote > Bob\n")
    cvr = read_cvr(path)
    r = cvr.rankings
    assert len(r) == 1_000_005 and cvr.n_ballots == 1_000_009
    assert r.items == ("Alice", "Bob", "Carol")
    assert len(r.distinct()[0]) == 3
    assert r[0].tolist() == [0, 1] and r[-1].tolist() == [2, 0]
    assert rules_of(cvr) == {"duplicate": 1_000_000, "skipped": 2, "overvote": 4,
                             "empty": 4}
    assert sentences_of(cvr)[0].startswith("1,000,000 ballots ranked a candidate twice")


def test_abif_with_candidate_declarations_and_ties(tmp_path):
    text = ('{"version": "0.1", "title": "Burlington"}\n'
            "=MW:[Montroll Wright]\n"
            "=KW:[Kurt Wright]\n"
            "=BK: [Bob Kiss]\n"
            "# ballots\n"
            "5:MW>KW>BK\n"
            "3: [Kurt Wright] > MW   # a comment\n"
            "2: BK=KW>MW\n"
            "1: BK>KW=MW\n")
    cvr = read_cvr(write(tmp_path, "bt.abif", text))
    r = cvr.rankings
    assert r.items == ("Montroll Wright", "Kurt Wright", "Bob Kiss")
    assert r.to_lists()[4:9] == [["Montroll Wright", "Kurt Wright"]] + \
        [["Kurt Wright", "Montroll Wright"]] * 3 + [["Bob Kiss"]]
    assert len(r) == 9
    assert rules_of(cvr) == {"tie": 3, "empty": 2, "complete": 5}
    assert cvr.layout == "count: ballot lines"


def test_a_gzipped_abif_file(tmp_path):
    path = tmp_path / "e.abif.gz"
    path.write_bytes(gzip.compress(b"=a:[Ann]\n=b:[Ben]\n2:a>b\n1:b\n"))
    assert read_cvr(path).rankings.to_lists() == [["Ann"], ["Ann"], ["Ben"]]


# --------------------------------------------------------------------------------------------
# the files' text: gzip, BOM, CRLF, quoting, separators


def test_gz_bom_crlf_and_spreadsheet_quoting(tmp_path):
    text = ('\ufeff"Precinct";"Rank 1";"Rank 2"\n'
            '"0101";"Smith, Jo";"Doe; Al"\n'
            '"0102";"Doe; Al";""\n')
    plain = write(tmp_path, "q.csv", text, newline="\r\n")
    packed = tmp_path / "q.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    for path in (plain, packed):
        r = read_cvr(path, group="Precinct").rankings
        assert r.items == ("Doe; Al", "Smith, Jo")
        assert r.to_lists() == [["Smith, Jo"], ["Doe; Al"]]
        assert r.groups.tolist() == ["0101", "0102"]


def test_a_tsv_file_with_short_rows(tmp_path):
    path = write(tmp_path, "t.tsv", "rank1\trank2\trank3\nA\tB\nC\n")
    assert read_cvr(path).rankings.to_lists() == [["A", "B"], ["C"]]


def test_numeric_candidate_ids_sort_as_numbers(tmp_path):
    path = write(tmp_path, "ids.csv", "rank1,rank2\n10,2\n9,\n")
    assert read_cvr(path).rankings.items == ("2", "9", "10")


# --------------------------------------------------------------------------------------------
# refusals: one line naming the path, the line and the cell


@pytest.mark.parametrize("name, text, kwargs, message", [
    ("cand.csv", "id,Rank 1,Rank 2\n1,A,B\n2,B,Zed\n", {"candidates": ["A", "B"]},
     "cand.csv: line 3, column 'Rank 2' (3): unknown candidate 'Zed'; the candidates are "
     "'A', 'B'"),
    ("count.csv", "Rank 1,Rank 2,count\nA,B,3\nB,A,2.5\n", {},
     "count.csv: line 3, column 'count': the count '2.5' is not a positive integer"),
    ("zero.csv", "Rank 1,Rank 2,count\nA,B,0\n", {},
     "zero.csv: line 2, column 'count': the count '0' is not a positive integer"),
    ("huge.txt", "3: A > B\n99999999999999999999: B > A\n", {},
     "huge.txt: line 2: the count 99999999999999999999 is more ballots than can be held (at "
     "most 1,000,000,000 a line)"),
    ("badline.txt", "3: A > B\n-2: B > A\n", {},
     "badline.txt: line 2: the count '-2' is not a positive integer"),
    ("noline.abif", "=a:[A]\n3: a > b\nb > a\n", {},
     "noline.abif: line 3: expected 'count: ballot' (such as '5: alice > bob'), got 'b > a'"),
    ("unknown.txt", "3: A > B\n2: B > Q\n", {"candidates": ["A", "B"]},
     "unknown.txt: line 2, rank 2: unknown candidate 'Q'; the candidates are 'A', 'B'"),
    ("wide.csv", "Rank 1,Rank 2\nA,B\nB,A,C\n", {},
     "wide.csv: line 3 has 3 cells, but the header (line 1) names 2 columns"),
    ("gap.csv", "Rank 1,Rank 2,Rank 4\nA,B,C\n", {},
     "gap.csv: line 1: the rank columns number ranks 1, 2, 4: no column holds rank 3"),
    ("group.csv", "Ward,Rank 1,Rank 2\nW,A,B\n", {"group": "Precinct"},
     "group.csv: line 1: the header has no group column 'Precinct'; its columns other than "
     "ranks are 'Ward'"),
    ("one.csv", "Rank 1,Rank 2\nA,\nA,A\n", {},
     "one.csv: the ballots name 1 candidate(s) (A); at least 2 are needed (pass candidates= "
     "to add those no ballot ranks)"),
])
def test_what_cannot_be_read_is_refused_in_one_line(tmp_path, name, text, kwargs, message):
    with pytest.raises(DataError) as info:
        read_cvr(write(tmp_path, name, text), **kwargs)
    got = str(info.value)
    assert "\n" not in got
    assert got == f"{tmp_path / name}: {message.split(': ', 1)[1]}"


def test_more_ballots_than_memory_holds_are_refused_before_they_are_laid_out(tmp_path):
    path = write(tmp_path, "many.txt", "600000000: A > B\n600000000: B > A\n")
    with pytest.raises(DataError, match=r"many\.txt counts 1,200,000,000 ballots that rank a "
                                        r"candidate; at most 1,000,000,000 are held in "
                                        r"memory, one row each$"):
        read_cvr(path)


def test_a_header_without_rank_columns_is_refused(tmp_path):
    path = write(tmp_path, "plain.csv", "a,b,c\nb,c,a\n")
    with pytest.raises(DataError, match=r"plain\.csv: line 1: the header has no rank column "
                                        r"\(such as 'Rank 1', 'Choice_1' or '1st choice'\); "
                                        r"its columns are 'a', 'b', 'c'\. A file of rankings "
                                        r"without such a header is read by read_rankings_csv"):
        read_cvr(path)


def test_bad_arguments_are_refused(tmp_path):
    path = write(tmp_path, "nyc.csv", NYC)
    with pytest.raises(ValueError, match="skipped must be one of 'skip', 'skip-one', "
                                         "'exhaust', got 'jump'"):
        read_cvr(path, skipped="jump")
    with pytest.raises(ValueError, match="write_ins must be one of"):
        read_cvr(path, write_ins="keep")
    lines = write(tmp_path, "l.txt", "2: a > b\n")
    with pytest.raises(DataError, match="group=, count=, contest= and sep= apply to tables"):
        read_cvr(lines, group="Precinct")


def test_what_looks_like_a_cvr(tmp_path):
    from dpclust.io.cvr import looks_like_cvr

    assert looks_like_cvr(write(tmp_path, "nyc.csv", NYC))  # extra columns
    assert looks_like_cvr(write(tmp_path, "m.csv", "Rank 1,Rank 2\nA,overvote\n"))
    assert looks_like_cvr(write(tmp_path, "l.txt", "3: A > B\n"))
    assert looks_like_cvr(write(tmp_path, "x.abif", "=a:[A]\n"))
    # plain tables of rankings stay with read_rankings_csv
    assert not looks_like_cvr(write(tmp_path, "p.csv", "Rank 1,Rank 2\nA,B\nB,\n"))
    assert not looks_like_cvr(write(tmp_path, "ids.csv", "Rank_1,Rank_2\n7,0\n2,9\n"))
    assert not looks_like_cvr(write(tmp_path, "h.csv", "a,b\nA,B\n"))
    assert not looks_like_cvr(tmp_path / "missing.csv")


def test_groups_on_rankings_are_checked():
    with pytest.raises(DataError, match=r"groups must hold one entry per ranking \(2\)"):
        Rankings([[0, 1], [1, -1]], 2, groups=["a"])
    with pytest.raises(ValueError, match="pass groups= too"):
        Rankings([[0, 1]], 2, group_name="ward")
    r = Rankings([[0, 1], [1, -1]], 2, groups=["a", "b"])
    assert r.group_name == "group" and r[1:].groups.tolist() == ["b"]


# --------------------------------------------------------------------------------------------
# the command line


def test_cli_fit_reads_a_cvr_and_its_summary_lists_every_rule(tmp_path, capsys):
    import json

    from dpclust.cli import main

    path = write(tmp_path, "nyc.csv", NYC)
    out = tmp_path / "o"
    status = main(["fit", "--random-state", "0", str(path), "--family", "mallows", "--n-chains", "1", "--n-iter", "5",
                   "--no-progress", "--no-plots", "--group", "Precinct", "--skipped", "exhaust",
                   "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 0, err
    data = json.loads((out / "summary.json").read_text())["data"]
    assert data["format"] == ("cast-vote records (rank columns 'DEM Mayor Choice 1 of 4' .. "
                              "'DEM Mayor Choice 4 of 4'; grouped by 'Precinct'; ignored "
                              "columns 'Cast Vote Record')")
    assert data["counting_rules"] == "--skipped exhaust, --overvote exhaust, --write-ins candidate"
    assert data["ballots_read"] == 8 and data["n_samples"] == 5
    assert data["group_column"] == "Precinct" and data["n_groups"] == 2
    assert data["cleaning"] == [
        "1 ballot ranked a write-in: read as the candidate 'Write-in' (--write-ins drop reads "
        "write-ins as skipped ranks instead)",
        "1 ballot ranked a candidate twice: the later copies were dropped",
        "2 ballots skipped a rank and ranked later candidates: the ranking stops at the skip "
        "(rule 'exhaust'; --skipped skip moves the later choices up instead)",
        "2 ballots had an overvote: the ranking ends before it (rule 'exhaust'; --overvote "
        "skip passes over it instead)",
        "3 ballots ranked no candidate (after the rules above): left out"]
    for sentence in data["cleaning"]:
        assert f"dpclust: {sentence}\n" in err
    html = (out / "report.html").read_text()  # the report's data table: one rule a line
    assert ("1 ballot ranked a candidate twice: the later copies were dropped<br>2 ballots "
            "skipped a rank" in html)
    config = json.loads((out / "run.json").read_text())["config"]
    assert config["cvr"] is True and config["skipped"] == "exhaust"
    assert len((out / "labels.csv").read_text().splitlines()) == 1 + 5


def test_cli_detects_a_cvr_refuses_other_families_and_index_base(tmp_path, capsys):
    from dpclust.cli import main

    path = write(tmp_path, "nyc.csv", NYC)
    # no --family: a cast-vote record gets the rankings' default model
    assert main(["fit", "--random-state", "0", str(path), "--n-iter", "5", "--n-chains", "1", "--no-progress",
                 "--no-plots", "--out", str(tmp_path / "o")]) == 0
    capsys.readouterr()
    assert main(["fit", "--random-state", "0", str(path), "--family", "gaussian", "--n-iter", "5",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "is a cast-vote record (ranked ballots): fit it with --family mallows" in err
    assert main(["fit", "--random-state", "0", str(path), "--family", "mallows", "--index-base", "1",
                 "--out", str(tmp_path / "o")]) == 2
    assert "--index-base numbers the items" in capsys.readouterr().err
    bad = write(tmp_path, "bad.csv", "Rank 1,Rank 2,count\nA,B,x\n")
    assert main(["fit", "--random-state", "0", str(bad), "--family", "mallows", "--cvr",
                 "--out", str(tmp_path / "o")]) == 2
    assert ("bad.csv: line 2, column 'count': the count 'x' is not a positive integer"
            in capsys.readouterr().err)
