"""`harness history`: a metric of each config and point over time, from the results store. `series` gathers the runs
(one row per store run, its value and 95 % interval, the marks where something changed), `render` draws the table,
the PNG trend and the HTML page."""
