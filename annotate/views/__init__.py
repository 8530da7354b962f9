"""Views, one module per area. Views only check access, parse a form, call a
service or selector, and redirect (Post/Redirect/Get)."""
