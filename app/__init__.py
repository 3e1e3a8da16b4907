from app.metrics_dir import prepare as _prepare_metrics_dir

_prepare_metrics_dir()  # before anything imports prometheus_client (app.metrics_dir)
