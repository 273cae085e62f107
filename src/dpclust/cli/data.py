"""Loading the data of a run: the bundled demo or data set, a table of numbers or counts, or a
file of rankings, with what the summary says about them (:class:`LoadedData`)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..families import choose_family
from ..utils.checks import CellError, DataError
from .loaded import LoadedData, _positions_info
from .config import (AUTO, DATASETS, MAX_LISTED_COLUMNS, RunConfig, _DEMO, _SUBSAMPLE_STREAM,
                     _is_preflib, _preflib_suffix, check_picked, family_kind)

# --------------------------------------------------------------------------------------------
# data


def _load(config: RunConfig) -> LoadedData:
    """Load the data of a run: the demo, a file, or a table with a truth column; then the
    ``--subsample``, if any."""
    from .tables import load_frame, reads_frames

    kind = family_kind(config.family)
    if kind == "rankings":
        data = _load_rankings(config)
    elif config.family == AUTO and not _reads_as_frame(config.data):
        data = _load_table(config, "auto")  # the demo, or counts from a sparse file
        data.family = choose_family(data.X).name
        if config.data != _DEMO:
            data.info["family_picked"] = data.family
    elif reads_frames(config.family) and config.data != _DEMO:
        data = load_frame(config)
    else:
        data = _load_table(config, kind)
    if data.family is not None:
        check_picked(config, data.family)
    if config.distances is not None:  # the ddCRP's
        from ..io import load_distances

        data.distances = load_distances(config.distances, n=data.n_rows or len(data.X))
        if data.rows is not None:  # the rows left out with no value to cluster on
            data.distances = data.distances[data.rows][:, data.rows]
        data.info["distances"] = config.distances
        if sp.issparse(data.distances):
            data.info["distance_pairs"] = int(data.distances.nnz)
    return _subsampled(config, data, kind)


def _reads_as_frame(path: str) -> bool:
    """Whether a data file is read as a table of mixed columns under ``--family auto``
    (text and Parquet tables, ``.npy`` arrays); sparse files (``.npz``, bag-of-words) hold
    counts."""
    from ..io.files import detect_format
    from ..io.frames import FRAME_FORMATS

    if path == _DEMO:
        return False
    try:
        return detect_format(Path(path))[0] in FRAME_FORMATS
    except DataError:  # not a data file: the table reader says what it is
        return True


def _subsampled(config: RunConfig, data: LoadedData, kind: str) -> LoadedData:
    """``--subsample N``: N rows drawn without replacement from their own random stream of
    ``--random-state`` (so a resumed run draws the same ones), kept in the data's order, with the
    truth, positions and distances that go with them."""
    if config.subsample is None:
        return data
    n_all = int(data.info["n_samples"])
    if config.subsample >= n_all:
        data.warnings.append(f"--subsample {config.subsample} is not fewer than the "
                             f"{n_all:,} rows of the data: all of them are fitted")
        return data
    rng = np.random.default_rng([config.seed, _SUBSAMPLE_STREAM])
    keep = np.sort(rng.choice(n_all, config.subsample, replace=False))
    data.X = data.X.iloc[keep] if hasattr(data.X, "iloc") else data.X[keep]
    for name in ("truth", "positions", "weights"):
        if getattr(data, name) is not None:
            setattr(data, name, np.asarray(getattr(data, name))[keep])
    data.rows = data.n_rows = None  # labels.csv holds the drawn rows' labels, in order
    if data.distances is not None:
        data.distances = data.distances[keep][:, keep]
        if sp.issparse(data.distances):
            data.info["distance_pairs"] = int(data.distances.nnz)
    data.info["subsample"] = {"n": int(len(keep)), "of": n_all, "seed": int(config.seed)}
    data.info["n_samples"] = int(len(keep))
    if "n_nonzero" in data.info and sp.issparse(data.X):
        data.info["n_nonzero"] = int(data.X.nnz)
    if kind == "rankings":
        data.info.update(_rankings_shape(data.X))
    return data


def _rankings_shape(X) -> dict:
    """What the summary says of a set of rankings: how many, of how many items, how long."""
    return {"n_samples": len(X), "n_items": int(X.n_items), "max_length": int(X.max_length),
            "mean_length": float(f"{float(np.mean(X.lengths)):.4g}")}


def _load_table(config: RunConfig, kind: str) -> LoadedData:
    """The data of a run with points or documents (``kind`` ``"dense"`` or ``"counts"``): the
    demo, a file, or a table with a truth column."""
    if config.data == _DEMO:
        from ..datasets import load_demo, make_documents

        if kind == "counts":
            X, y = make_documents(random_state=0)
            generator = "make_documents(random_state=0)"
        else:
            X, y = load_demo()
            generator = "load_demo()"
        info = {"source": _DEMO, "format": generator}
        data = LoadedData(X=X, truth=y, info=info)
    else:
        from ..io import as_labels, load_data, load_data_with_columns, parse_positions

        special = {}
        if config.truth is not None:
            special["label"] = config.truth
        if config.positions is not None:
            special["positions"] = config.positions
        values = {}
        try:
            if special:
                X, meta, values = load_data_with_columns(
                    config.data, special, kind=kind, column=config.columns, sep=config.sep,
                    decimal=config.decimal)
            else:
                column = None if config.columns is None else list(config.columns)
                X, meta = load_data(config.data, kind=kind, column=column, sep=config.sep,
                                    decimal=config.decimal)
        except CellError as exc:
            if kind != "dense":
                raise
            raise CellError(f"{str(exc).rstrip('.')}; --family {config.family} needs complete "
                            "numbers: use "
                            "--family auto (or table) to model holes and text columns") from None
        info = {"source": meta["path"], "format": meta["format"]}
        if "dialect" in meta:
            info.update(read_as=meta["dialect"], separator=meta["separator"],
                        decimal=meta["decimal"])
        if meta.get("column_names") is not None:
            names = list(meta["column_names"])
            info["columns"] = names[:MAX_LISTED_COLUMNS]
            if len(names) > MAX_LISTED_COLUMNS:  # a wide file: the first ones, and a count
                info["columns_not_listed"] = len(names) - MAX_LISTED_COLUMNS
        truth = positions = None
        if config.truth is not None:
            info["truth_column"] = config.truth
            truth = as_labels(values["label"])
        if config.positions is not None:
            positions = parse_positions(
                values["positions"],
                what=f"{meta['path']}: the positions column {config.positions!r}")
            info.update(_positions_info(config, positions))
        data = LoadedData(X=X, truth=truth, info=info, positions=positions)
    data.info["n_samples"] = int(data.X.shape[0])
    data.info["n_features"] = int(data.X.shape[1])
    if kind in ("counts", "auto") and sp.issparse(data.X):
        data.info["n_nonzero"] = int(data.X.nnz)
    if config.vocab is not None:
        from ..io import load_vocabulary

        words = load_vocabulary(config.vocab)
        if len(words) != data.info["n_features"]:
            raise DataError(f"{config.vocab} has {len(words)} words, but the data have "
                            f"{data.info['n_features']} columns (one per word)")
        data.vocabulary = words
        data.info["vocabulary"] = config.vocab
    return data


def _load_rankings(config: RunConfig) -> LoadedData:
    """Load the rankings of a family of rankings (``--family mallows``): a bundled data set,
    a CSV table of rankings (:func:`~dpclust.io.read_rankings_csv`), a PrefLib file
    (:func:`~dpclust.io.read_preflib`) or a cast-vote record (:func:`_load_cvr`).

    Items without names are named as the file numbers them (from ``--index-base`` in a CSV
    file, from 1 in a PrefLib file), so that the summary and the report speak of the items
    as the file does.
    """
    import warnings

    from ..io import read_preflib, read_rankings_csv
    from ..rankings import Rankings

    messages = []
    if config.cvr:
        return _load_cvr(config)
    if config.data in DATASETS:
        from .. import datasets

        _, description, loader = DATASETS[config.data]
        X = getattr(datasets, loader)()
        info = {"source": config.data, "format": f"{loader}()", "dataset": description}
    else:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            if _is_preflib(config.data):
                X = read_preflib(config.data)
                first_id = 1
                fmt = f"PrefLib {_preflib_suffix(config.data)}"
            else:
                from ..io import load_item_names

                items = None if config.items is None else load_item_names(config.items)
                first_id = config.index_base
                kwargs = {} if config.missing is None else {"missing": config.missing}
                try:
                    X = read_rankings_csv(config.data, items=items, index_base=first_id,
                                          sep=config.sep, **kwargs)
                except DataError as exc:
                    raise DataError(_option_names(str(exc))) from None
                fmt = "rankings table"
                if first_id is None and items is None and X.items is not None and all(
                        name.isdigit() for name in X.items):
                    # ids, their base inferred (0 when some ranking uses 0, else 1)
                    fmt += f" (item ids from {X.items[0]}, inferred: --index-base sets it)"
                first_id = first_id or 0
        messages = [_option_names(str(w.message)) for w in caught
                    if issubclass(w.category, UserWarning)]
        if X.items is None:
            fmt += f" (item ids from {first_id})"
            X = Rankings._from_valid(X.orders, X.lengths, X.n_items,
                                     tuple(str(first_id + j) for j in range(X.n_items)))
        info = {"source": config.data, "format": fmt}
        if config.items is not None:
            info["items"] = config.items
        if config.missing is not None:
            info["missing"] = list(config.missing)
    info.update(_rankings_shape(X))
    return LoadedData(X=X, truth=None, info=info, warnings=messages)


def _load_cvr(config: RunConfig) -> LoadedData:
    """Load a cast-vote record (:func:`~dpclust.io.read_cvr`): the summary says how it was
    read, by which rules, and how many ballots each rule changed (``cleaning``)."""
    from ..io import load_item_names, read_cvr

    kwargs = {name: getattr(config, name) for name in ("skipped", "overvote", "write_ins",
                                                        "group", "contest")
              if getattr(config, name) is not None}
    if config.missing is not None:
        kwargs["missing"] = config.missing
    if config.items is not None:
        kwargs["candidates"] = load_item_names(config.items)
    try:
        cvr = read_cvr(config.data, sep=config.sep, **kwargs)
    except DataError as exc:
        raise DataError(_option_names(str(exc))) from None
    info = {"source": config.data, "format": f"cast-vote records ({cvr.layout})",
            "counting_rules": _option_names(cvr.rules), "ballots_read": cvr.n_ballots,
            "cleaning": [_option_names(rule.sentence) for rule in cvr.cleaning]}
    if config.items is not None:
        info["items"] = config.items
    if config.missing is not None:
        info["missing"] = list(config.missing)
    if cvr.rankings.groups is not None:
        info["group_column"] = cvr.rankings.group_name
        info["n_groups"] = int(len(np.unique(cvr.rankings.groups)))
    info.update(_rankings_shape(cvr.rankings))
    return LoadedData(X=cvr.rankings, truth=None, info=info)


def _option_names(message: str) -> str:
    """A rankings loader's hint in terms of the command line: ``missing=('0',)`` becomes
    ``--missing 0``, ``index_base=1`` ``--index-base 1``, ``items=`` (``candidates=``)
    ``--items FILE``, and ``skipped='exhaust'`` ``--skipped exhaust`` (so for
    ``overvote=``, ``write_ins=``, ``group=`` and ``contest=``)."""
    message = re.sub(r"missing=\('((?:[^'\\]|\\.)*)',\)", r"--missing \1", message)
    message = re.sub(r"index_base=(\d+)", r"--index-base \1", message)
    message = message.replace("index_base= ", "--index-base ")
    message = re.sub(r"\b(skipped|overvote|write_ins)='([\w-]+)'",
                     lambda m: f"--{m.group(1).replace('_', '-')} {m.group(2)}", message)
    message = re.sub(r"\bskipped ranks: '([\w-]+)'; overvotes: '([\w-]+)'; write-ins: "
                     r"'([\w-]+)'", r"--skipped \1, --overvote \2, --write-ins \3", message)
    message = re.sub(r"\b(group|contest|sep)=", r"--\1", message)
    message = message.replace("pass candidates=", "pass --items FILE")
    return re.sub(r"\bpass items=", "pass --items FILE", message)


