"""Render: the report's files, from the analysed curves.

`build` writes everything into one directory: `html`, `markdown`, `plots` and `csv_export`.
"""
