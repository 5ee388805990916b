include $(sort $(wildcard $(BR2_EXTERNAL_ROOTFS_TRIM_PATH)/package/*/*.mk))
