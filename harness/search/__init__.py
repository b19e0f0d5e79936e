"""`harness search`: the highest concurrency whose point meets a service level (SLO).

`slo` parses the expressions and judges one value; `order` is the search itself as a pure function of the
outcomes so far (gallop up, then bisect); `candidate` plans a point at any concurrency from the recipe's
nearest point; `tested` reads a tested point's own record into its outcome against the SLO (pass, fail, or
inconclusive when its sample cannot tell), with distribution-free bounds of each percentile from its per-request
records (`spread`);
`outcome` builds `search.json` and the console summary (an uncertain answer with the interval in which the
boundary lies); `driver` runs the loop with the ordinary point runner, re-testing inconclusive points within the
search's budget.
"""
