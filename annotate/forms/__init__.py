"""Every form of the site, by area: parsing and field checks only.

``uploads`` (the response-set upload of the admin and the API), ``judging``
(onboarding, judgments, the study manage page), ``results`` (filters of a
run's question list), ``reports`` (the report's parameters) and ``analyses``
(one form per paper analysis). Import from the area module.
"""
