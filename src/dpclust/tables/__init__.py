"""Tables of mixed columns: the data layer of the table families.

* :class:`TableData` -- the working form: real, category and count columns with holes;
* :func:`infer_schema` -- a kind per column from its dtype and values (:class:`Schema`);
* :func:`check_table` -- DataFrames and arrays -> :class:`TableData`;
* :func:`numbered_ids` -- the columns of numbers that :func:`infer_schema` leaves out as ids;
* :func:`one_kind` -- the kinds of a family of one kind (its ids still left out);
* :func:`columns_left_out` -- those ids and the columns that copy an earlier one.
"""

from .columns import (MISSING_MARKERS, check_table, columns_left_out, encode, infer_schema,
                      numbered_ids, one_kind)
from .data import KINDS, Column, Schema, TableData

__all__ = ["KINDS", "MISSING_MARKERS", "Column", "Schema", "TableData", "check_table",
           "columns_left_out", "encode", "infer_schema", "numbered_ids", "one_kind"]
