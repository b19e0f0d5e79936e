"""Read: the result files of one or more runs, grouped into the report's series.

`load` reads every point's record (`unfinished` names the points without one), `samples` and
`samples_file` the per-request samples, `evals` the accuracy gates, `export` the InferenceX export;
`series`, `configs`, `arms` and `attributes` group points into curves and name what tells them apart.
"""
