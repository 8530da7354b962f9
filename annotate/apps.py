from django.apps import AppConfig
from django.db.models.signals import post_delete


def _remove_matrix_store(sender, instance, **kwargs) -> None:
    """A deleted response set's matrix store goes once the deletion commits."""
    from annotate.catalog import store_remove_on_commit
    store_remove_on_commit(instance.pk)


class AnnotateConfig(AppConfig):
    name = "annotate"
    verbose_name = "EIP human alignment"

    def ready(self) -> None:
        post_delete.connect(_remove_matrix_store, sender=self.get_model("ResponseSet"),
                            dispatch_uid="annotate.response_set_store")
