"""The HTTP service: Flask app factory (``web.app.create_app``), schemas, resources, storage, auth.

Nothing is imported here, so that workers can use the storage modules without loading the web app."""
