/*
 * sal.h - the source annotation language (SAL) of the WDK, as empty macros.
 *
 * Windows kernel code is annotated throughout (_In_, _IRQL_requires_max_,
 * _Use_decl_annotations_, ...). Only Microsoft's static analysis reads the
 * annotations; the compilers here never do, so each one expands to nothing.
 * The IRQL rules they state are checked at run time instead (the kit's IRQL
 * checker, docs/wdk.md).
 */
#ifndef SOFTNDK_WDK_SAL_H_
#define SOFTNDK_WDK_SAL_H_

/* clang-format off */
#ifndef _In_
#define _In_
#endif
#ifndef _In_opt_
#define _In_opt_
#endif
#ifndef _Out_
#define _Out_
#endif
#ifndef _Out_opt_
#define _Out_opt_
#endif
#ifndef _Inout_
#define _Inout_
#endif
#ifndef _Inout_opt_
#define _Inout_opt_
#endif
#ifndef _In_z_
#define _In_z_
#endif
#ifndef _In_opt_z_
#define _In_opt_z_
#endif
#ifndef _Inout_z_
#define _Inout_z_
#endif
#ifndef _Inout_opt_z_
#define _Inout_opt_z_
#endif
#ifndef _Out_z_
#define _Out_z_
#endif
#ifndef _Outptr_
#define _Outptr_
#endif
#ifndef _Outptr_opt_
#define _Outptr_opt_
#endif
#ifndef _Outptr_result_maybenull_
#define _Outptr_result_maybenull_
#endif
#ifndef _Outptr_opt_result_maybenull_
#define _Outptr_opt_result_maybenull_
#endif
#ifndef _Outptr_result_nullonfailure_
#define _Outptr_result_nullonfailure_
#endif
#ifndef _COM_Outptr_
#define _COM_Outptr_
#endif
#ifndef _Ret_maybenull_
#define _Ret_maybenull_
#endif
#ifndef _Ret_notnull_
#define _Ret_notnull_
#endif
#ifndef _Ret_z_
#define _Ret_z_
#endif
#ifndef _Ret_maybenull_z_
#define _Ret_maybenull_z_
#endif
#ifndef _Must_inspect_result_
#define _Must_inspect_result_
#endif
#ifndef _Check_return_
#define _Check_return_
#endif
#ifndef _Pre_
#define _Pre_
#endif
#ifndef _Post_
#define _Post_
#endif
#ifndef _Pre_notnull_
#define _Pre_notnull_
#endif
#ifndef _Pre_maybenull_
#define _Pre_maybenull_
#endif
#ifndef _Pre_null_
#define _Pre_null_
#endif
#ifndef _Post_notnull_
#define _Post_notnull_
#endif
#ifndef _Post_maybenull_
#define _Post_maybenull_
#endif
#ifndef _Post_null_
#define _Post_null_
#endif
#ifndef _Pre_valid_
#define _Pre_valid_
#endif
#ifndef _Post_valid_
#define _Post_valid_
#endif
#ifndef _Post_invalid_
#define _Post_invalid_
#endif
#ifndef _Post_ptr_invalid_
#define _Post_ptr_invalid_
#endif
#ifndef _Post_z_
#define _Post_z_
#endif
#ifndef _Pre_z_
#define _Pre_z_
#endif
#ifndef _Frees_ptr_
#define _Frees_ptr_
#endif
#ifndef _Frees_ptr_opt_
#define _Frees_ptr_opt_
#endif
#ifndef _Null_terminated_
#define _Null_terminated_
#endif
#ifndef _NullNull_terminated_
#define _NullNull_terminated_
#endif
#ifndef _Reserved_
#define _Reserved_
#endif
#ifndef _Printf_format_string_
#define _Printf_format_string_
#endif
#ifndef _Scanf_format_string_
#define _Scanf_format_string_
#endif
#ifndef _Use_decl_annotations_
#define _Use_decl_annotations_
#endif
#ifndef _Maybenull_
#define _Maybenull_
#endif
#ifndef _Notnull_
#define _Notnull_
#endif
#ifndef _Null_
#define _Null_
#endif
#ifndef _Const_
#define _Const_
#endif
#ifndef _Literal_
#define _Literal_
#endif
#ifndef _Notliteral_
#define _Notliteral_
#endif
#ifndef _Strict_type_match_
#define _Strict_type_match_
#endif
#ifndef _Points_to_data_
#define _Points_to_data_
#endif
#ifndef _Interlocked_
#define _Interlocked_
#endif
#ifndef _Interlocked_operand_
#define _Interlocked_operand_
#endif
#ifndef _Inexpressible_
#define _Inexpressible_
#endif
#ifndef _Curr_
#define _Curr_
#endif
#ifndef _Notref_
#define _Notref_
#endif
#ifndef _Deref_
#define _Deref_
#endif
#ifndef _Pre_defensive_
#define _Pre_defensive_
#endif
#ifndef _Post_defensive_
#define _Post_defensive_
#endif
#ifndef _IRQL_saves_
#define _IRQL_saves_
#endif
#ifndef _IRQL_restores_
#define _IRQL_restores_
#endif
#ifndef _IRQL_requires_same_
#define _IRQL_requires_same_
#endif
#ifndef _IRQL_uses_cancel_
#define _IRQL_uses_cancel_
#endif
#ifndef _IRQL_is_cancel_
#define _IRQL_is_cancel_
#endif
#ifndef _Kernel_float_saved_
#define _Kernel_float_saved_
#endif
#ifndef _Kernel_float_restored_
#define _Kernel_float_restored_
#endif
#ifndef _Kernel_float_used_
#define _Kernel_float_used_
#endif
#ifndef _Kernel_acquires_resource_
#define _Kernel_acquires_resource_
#endif
#ifndef _Kernel_releases_resource_
#define _Kernel_releases_resource_
#endif
#ifndef _Kernel_IoGetDmaAdapter_
#define _Kernel_IoGetDmaAdapter_
#endif
#ifndef _Kernel_entry_
#define _Kernel_entry_
#endif
#ifndef _Kernel_entry_always_
#define _Kernel_entry_always_
#endif
#ifndef _Kernel_ptr_
#define _Kernel_ptr_
#endif
#ifndef _Enum_is_bitflag_
#define _Enum_is_bitflag_
#endif
#ifndef _Analysis_noreturn_
#define _Analysis_noreturn_
#endif
#ifndef _Field_z_
#define _Field_z_
#endif
#ifndef _Post_same_lock_
#define _Post_same_lock_
#endif
#ifndef _Lock_kind_mutex_
#define _Lock_kind_mutex_
#endif
#ifndef _Lock_kind_event_
#define _Lock_kind_event_
#endif
#ifndef _Lock_kind_semaphore_
#define _Lock_kind_semaphore_
#endif
#ifndef _Lock_kind_spin_lock_
#define _Lock_kind_spin_lock_
#endif
#ifndef _Lock_kind_critical_section_
#define _Lock_kind_critical_section_
#endif
#ifndef _Unreferenced_parameter_
#define _Unreferenced_parameter_
#endif
#ifndef _Deref_out_
#define _Deref_out_
#endif
#ifndef _Deref_opt_out_
#define _Deref_opt_out_
#endif
#ifndef _Deref_in_
#define _Deref_in_
#endif
#ifndef _Outptr_result_buffer_maybenull_
#define _Outptr_result_buffer_maybenull_
#endif
#ifndef _Out_writes_z_
#define _Out_writes_z_
#endif
#ifndef _Ret_
#define _Ret_
#endif
#ifndef _Ret_valid_
#define _Ret_valid_
#endif
#ifndef _Ret_null_
#define _Ret_null_
#endif
#ifndef _Result_nullonfailure_
#define _Result_nullonfailure_
#endif
#ifndef _Result_zeroonfailure_
#define _Result_zeroonfailure_
#endif
#ifndef _Post_readable_size_
#define _Post_readable_size_
#endif
#ifndef _Notvalid_
#define _Notvalid_
#endif
#ifndef _Pre_unknown_
#define _Pre_unknown_
#endif
#ifndef _Acquires_nonreentrant_lock_
#define _Acquires_nonreentrant_lock_
#endif
#ifndef _Releases_nonreentrant_lock_
#define _Releases_nonreentrant_lock_
#endif
#ifndef _Requires_exclusive_lock_held_
#define _Requires_exclusive_lock_held_
#endif
#ifndef _Requires_shared_lock_held_
#define _Requires_shared_lock_held_
#endif
#ifndef _Requires_no_locks_held_
#define _Requires_no_locks_held_
#endif
#ifndef _No_competing_thread_
#define _No_competing_thread_
#endif
#ifndef _Benign_race_begin_
#define _Benign_race_begin_
#endif
#ifndef _Benign_race_end_
#define _Benign_race_end_
#endif
#ifndef _No_competing_thread_begin_
#define _No_competing_thread_begin_
#endif
#ifndef _No_competing_thread_end_
#define _No_competing_thread_end_
#endif
#ifndef _Analysis_suppress_lock_checking_
#define _Analysis_suppress_lock_checking_
#endif
#ifndef __drv_aliasesMem
#define __drv_aliasesMem
#endif
#ifndef __drv_sameIRQL
#define __drv_sameIRQL
#endif
#ifndef __drv_useCancelIRQL
#define __drv_useCancelIRQL
#endif
#ifndef __drv_isCancelIRQL
#define __drv_isCancelIRQL
#endif
#ifndef __drv_inTry
#define __drv_inTry
#endif
#ifndef __drv_notInTry
#define __drv_notInTry
#endif
#ifndef __drv_savesIRQL
#define __drv_savesIRQL
#endif
#ifndef __drv_restoresIRQL
#define __drv_restoresIRQL
#endif
#ifndef __drv_isObjectPointer
#define __drv_isObjectPointer
#endif
#ifndef __drv_clearDoInit
#define __drv_clearDoInit
#endif
#ifndef __drv_floatSaved
#define __drv_floatSaved
#endif
#ifndef __drv_floatRestored
#define __drv_floatRestored
#endif
#ifndef __drv_floatUsed
#define __drv_floatUsed
#endif
#ifndef __drv_dispatchType_other
#define __drv_dispatchType_other
#endif
#ifndef __drv_Mode_impl
#define __drv_Mode_impl
#endif
#ifndef __drv_out
#define __drv_out
#endif
#ifndef __drv_in
#define __drv_in
#endif
#ifndef __drv_arg
#define __drv_arg
#endif
#ifndef __drv_ret
#define __drv_ret
#endif
#ifndef __drv_valueIs
#define __drv_valueIs
#endif
#ifndef __drv_nonConstant
#define __drv_nonConstant
#endif
#ifndef _In_reads_
#define _In_reads_(...)
#endif
#ifndef _In_reads_opt_
#define _In_reads_opt_(...)
#endif
#ifndef _In_reads_bytes_
#define _In_reads_bytes_(...)
#endif
#ifndef _In_reads_bytes_opt_
#define _In_reads_bytes_opt_(...)
#endif
#ifndef _In_reads_z_
#define _In_reads_z_(...)
#endif
#ifndef _In_reads_or_z_
#define _In_reads_or_z_(...)
#endif
#ifndef _In_reads_to_ptr_
#define _In_reads_to_ptr_(...)
#endif
#ifndef _In_reads_to_ptr_opt_
#define _In_reads_to_ptr_opt_(...)
#endif
#ifndef _Out_writes_
#define _Out_writes_(...)
#endif
#ifndef _Out_writes_opt_
#define _Out_writes_opt_(...)
#endif
#ifndef _Out_writes_bytes_
#define _Out_writes_bytes_(...)
#endif
#ifndef _Out_writes_bytes_opt_
#define _Out_writes_bytes_opt_(...)
#endif
#ifndef _Out_writes_to_
#define _Out_writes_to_(...)
#endif
#ifndef _Out_writes_to_opt_
#define _Out_writes_to_opt_(...)
#endif
#ifndef _Out_writes_bytes_to_
#define _Out_writes_bytes_to_(...)
#endif
#ifndef _Out_writes_bytes_to_opt_
#define _Out_writes_bytes_to_opt_(...)
#endif
#ifndef _Out_writes_all_
#define _Out_writes_all_(...)
#endif
#ifndef _Out_writes_bytes_all_
#define _Out_writes_bytes_all_(...)
#endif
#ifndef _Out_writes_bytes_all_opt_
#define _Out_writes_bytes_all_opt_(...)
#endif
#ifndef _Out_writes_all_opt_
#define _Out_writes_all_opt_(...)
#endif
#ifndef _Out_writes_opt_z_
#define _Out_writes_opt_z_(...)
#endif
#ifndef _Inout_updates_
#define _Inout_updates_(...)
#endif
#ifndef _Inout_updates_opt_
#define _Inout_updates_opt_(...)
#endif
#ifndef _Inout_updates_bytes_
#define _Inout_updates_bytes_(...)
#endif
#ifndef _Inout_updates_bytes_opt_
#define _Inout_updates_bytes_opt_(...)
#endif
#ifndef _Inout_updates_to_
#define _Inout_updates_to_(...)
#endif
#ifndef _Inout_updates_bytes_to_
#define _Inout_updates_bytes_to_(...)
#endif
#ifndef _Inout_updates_all_
#define _Inout_updates_all_(...)
#endif
#ifndef _Inout_updates_bytes_all_
#define _Inout_updates_bytes_all_(...)
#endif
#ifndef _Inout_updates_z_
#define _Inout_updates_z_(...)
#endif
#ifndef _Outptr_result_buffer_
#define _Outptr_result_buffer_(...)
#endif
#ifndef _Outptr_result_bytebuffer_
#define _Outptr_result_bytebuffer_(...)
#endif
#ifndef _Outptr_result_bytebuffer_maybenull_
#define _Outptr_result_bytebuffer_maybenull_(...)
#endif
#ifndef _Outptr_opt_result_buffer_
#define _Outptr_opt_result_buffer_(...)
#endif
#ifndef _Outptr_opt_result_bytebuffer_
#define _Outptr_opt_result_bytebuffer_(...)
#endif
#ifndef _Outptr_result_buffer_to_
#define _Outptr_result_buffer_to_(...)
#endif
#ifndef _Outptr_result_bytebuffer_to_
#define _Outptr_result_bytebuffer_to_(...)
#endif
#ifndef _Ret_writes_
#define _Ret_writes_(...)
#endif
#ifndef _Ret_writes_bytes_
#define _Ret_writes_bytes_(...)
#endif
#ifndef _Ret_writes_maybenull_
#define _Ret_writes_maybenull_(...)
#endif
#ifndef _Ret_writes_bytes_maybenull_
#define _Ret_writes_bytes_maybenull_(...)
#endif
#ifndef _Ret_writes_bytes_to_
#define _Ret_writes_bytes_to_(...)
#endif
#ifndef _Ret_writes_bytes_maybenull_to_
#define _Ret_writes_bytes_maybenull_to_(...)
#endif
#ifndef _Ret_range_
#define _Ret_range_(...)
#endif
#ifndef _Success_
#define _Success_(...)
#endif
#ifndef _When_
#define _When_(...)
#endif
#ifndef _At_
#define _At_(...)
#endif
#ifndef _At_buffer_
#define _At_buffer_(...)
#endif
#ifndef _Always_
#define _Always_(...)
#endif
#ifndef _On_failure_
#define _On_failure_(...)
#endif
#ifndef _Return_type_success_
#define _Return_type_success_(...)
#endif
#ifndef _Field_size_
#define _Field_size_(...)
#endif
#ifndef _Field_size_opt_
#define _Field_size_opt_(...)
#endif
#ifndef _Field_size_bytes_
#define _Field_size_bytes_(...)
#endif
#ifndef _Field_size_bytes_opt_
#define _Field_size_bytes_opt_(...)
#endif
#ifndef _Field_size_part_
#define _Field_size_part_(...)
#endif
#ifndef _Field_size_bytes_part_
#define _Field_size_bytes_part_(...)
#endif
#ifndef _Field_size_full_
#define _Field_size_full_(...)
#endif
#ifndef _Field_size_bytes_full_
#define _Field_size_bytes_full_(...)
#endif
#ifndef _Field_range_
#define _Field_range_(...)
#endif
#ifndef _In_range_
#define _In_range_(...)
#endif
#ifndef _Out_range_
#define _Out_range_(...)
#endif
#ifndef _Deref_out_range_
#define _Deref_out_range_(...)
#endif
#ifndef _Deref_in_range_
#define _Deref_in_range_(...)
#endif
#ifndef _Pre_satisfies_
#define _Pre_satisfies_(...)
#endif
#ifndef _Post_satisfies_
#define _Post_satisfies_(...)
#endif
#ifndef _Satisfies_
#define _Satisfies_(...)
#endif
#ifndef _Post_equal_to_
#define _Post_equal_to_(...)
#endif
#ifndef _Post_writable_byte_size_
#define _Post_writable_byte_size_(...)
#endif
#ifndef _Post_readable_byte_size_
#define _Post_readable_byte_size_(...)
#endif
#ifndef _Pre_readable_byte_size_
#define _Pre_readable_byte_size_(...)
#endif
#ifndef _Pre_writable_byte_size_
#define _Pre_writable_byte_size_(...)
#endif
#ifndef _Pre_readable_size_
#define _Pre_readable_size_(...)
#endif
#ifndef _Pre_writable_size_
#define _Pre_writable_size_(...)
#endif
#ifndef _Post_writable_size_
#define _Post_writable_size_(...)
#endif
#ifndef _Readable_bytes_
#define _Readable_bytes_(...)
#endif
#ifndef _Writable_bytes_
#define _Writable_bytes_(...)
#endif
#ifndef _Readable_elements_
#define _Readable_elements_(...)
#endif
#ifndef _Writable_elements_
#define _Writable_elements_(...)
#endif
#ifndef _Struct_size_bytes_
#define _Struct_size_bytes_(...)
#endif
#ifndef _Analysis_assume_
#define _Analysis_assume_(...)
#endif
#ifndef _Analysis_mode_
#define _Analysis_mode_(...)
#endif
#ifndef _IRQL_requires_
#define _IRQL_requires_(...)
#endif
#ifndef _IRQL_requires_max_
#define _IRQL_requires_max_(...)
#endif
#ifndef _IRQL_requires_min_
#define _IRQL_requires_min_(...)
#endif
#ifndef _IRQL_raises_
#define _IRQL_raises_(...)
#endif
#ifndef _IRQL_saves_global_
#define _IRQL_saves_global_(...)
#endif
#ifndef _IRQL_restores_global_
#define _IRQL_restores_global_(...)
#endif
#ifndef _IRQL_always_function_max_
#define _IRQL_always_function_max_(...)
#endif
#ifndef _IRQL_always_function_min_
#define _IRQL_always_function_min_(...)
#endif
#ifndef _Function_class_
#define _Function_class_(...)
#endif
#ifndef _Dispatch_type_
#define _Dispatch_type_(...)
#endif
#ifndef _Requires_lock_held_
#define _Requires_lock_held_(...)
#endif
#ifndef _Requires_lock_not_held_
#define _Requires_lock_not_held_(...)
#endif
#ifndef _Acquires_lock_
#define _Acquires_lock_(...)
#endif
#ifndef _Releases_lock_
#define _Releases_lock_(...)
#endif
#ifndef _Acquires_exclusive_lock_
#define _Acquires_exclusive_lock_(...)
#endif
#ifndef _Releases_exclusive_lock_
#define _Releases_exclusive_lock_(...)
#endif
#ifndef _Acquires_shared_lock_
#define _Acquires_shared_lock_(...)
#endif
#ifndef _Releases_shared_lock_
#define _Releases_shared_lock_(...)
#endif
#ifndef _Guarded_by_
#define _Guarded_by_(...)
#endif
#ifndef _Write_guarded_by_
#define _Write_guarded_by_(...)
#endif
#ifndef _Kernel_requires_resource_held_
#define _Kernel_requires_resource_held_(...)
#endif
#ifndef _Kernel_requires_resource_not_held_
#define _Kernel_requires_resource_not_held_(...)
#endif
#ifndef _Kernel_clear_do_init_
#define _Kernel_clear_do_init_(...)
#endif
#ifndef _Create_lock_level_
#define _Create_lock_level_(...)
#endif
#ifndef _Has_lock_kind_
#define _Has_lock_kind_(...)
#endif
#ifndef _Has_lock_level_
#define _Has_lock_level_(...)
#endif
#ifndef _Lock_level_order_
#define _Lock_level_order_(...)
#endif
#ifndef _Old_
#define _Old_(...)
#endif
#ifndef _Param_
#define _Param_(...)
#endif
#ifndef _Printf_format_string_params_
#define _Printf_format_string_params_(...)
#endif
#ifndef _Deref_post_range_
#define _Deref_post_range_(...)
#endif
#ifndef _Deref_pre_range_
#define _Deref_pre_range_(...)
#endif
#ifndef _Post_count_
#define _Post_count_(...)
#endif
#ifndef _Pre_count_
#define _Pre_count_(...)
#endif
#ifndef __drv_maxIRQL
#define __drv_maxIRQL(...)
#endif
#ifndef __drv_minIRQL
#define __drv_minIRQL(...)
#endif
#ifndef __drv_requiresIRQL
#define __drv_requiresIRQL(...)
#endif
#ifndef __drv_setsIRQL
#define __drv_setsIRQL(...)
#endif
#ifndef __drv_raisesIRQL
#define __drv_raisesIRQL(...)
#endif
#ifndef __drv_maxFunctionIRQL
#define __drv_maxFunctionIRQL(...)
#endif
#ifndef __drv_minFunctionIRQL
#define __drv_minFunctionIRQL(...)
#endif
#ifndef __drv_functionClass
#define __drv_functionClass(...)
#endif
#ifndef __drv_dispatchType
#define __drv_dispatchType(...)
#endif
#ifndef __drv_allocatesMem
#define __drv_allocatesMem(...)
#endif
#ifndef __drv_freesMem
#define __drv_freesMem(...)
#endif
#ifndef __drv_when
#define __drv_when(...)
#endif
#ifndef __drv_at
#define __drv_at(...)
#endif
#ifndef __drv_strictTypeMatch
#define __drv_strictTypeMatch(...)
#endif
#ifndef __drv_strictType
#define __drv_strictType(...)
#endif
#ifndef __drv_reportError
#define __drv_reportError(...)
#endif
#ifndef __drv_mustHold
#define __drv_mustHold(...)
#endif
#ifndef __drv_neverHold
#define __drv_neverHold(...)
#endif
#ifndef __drv_acquiresResource
#define __drv_acquiresResource(...)
#endif
#ifndef __drv_releasesResource
#define __drv_releasesResource(...)
#endif
#ifndef __drv_acquiresResourceGlobal
#define __drv_acquiresResourceGlobal(...)
#endif
#ifndef __drv_releasesResourceGlobal
#define __drv_releasesResourceGlobal(...)
#endif
#ifndef __drv_mustHoldGlobal
#define __drv_mustHoldGlobal(...)
#endif
#ifndef __drv_neverHoldGlobal
#define __drv_neverHoldGlobal(...)
#endif
#ifndef __drv_preferredFunction
#define __drv_preferredFunction(...)
#endif
#ifndef __drv_savesIRQLGlobal
#define __drv_savesIRQLGlobal(...)
#endif
#ifndef __drv_restoresIRQLGlobal
#define __drv_restoresIRQLGlobal(...)
#endif
#ifndef __drv_acquiresCancelSpinLock
#define __drv_acquiresCancelSpinLock(...)
#endif
#ifndef __drv_releasesCancelSpinLock
#define __drv_releasesCancelSpinLock(...)
#endif
#ifndef __drv_acquiresExclusiveResource
#define __drv_acquiresExclusiveResource(...)
#endif
#ifndef __drv_releasesExclusiveResource
#define __drv_releasesExclusiveResource(...)
#endif
#ifndef __drv_acquiresPriorityLock
#define __drv_acquiresPriorityLock(...)
#endif
#ifndef __drv_releasesPriorityLock
#define __drv_releasesPriorityLock(...)
#endif
#ifndef __drv_innerMustHoldGlobal
#define __drv_innerMustHoldGlobal(...)
#endif
#ifndef __drv_innerNeverHoldGlobal
#define __drv_innerNeverHoldGlobal(...)
#endif
#ifndef __drv_formatString
#define __drv_formatString(...)
#endif
#ifndef __drv_constant
#define __drv_constant(...)
#endif
#ifndef __drv_interlocked
#define __drv_interlocked(...)
#endif
#ifndef __drv_deref
#define __drv_deref(...)
#endif
/* clang-format on */

#endif /* SOFTNDK_WDK_SAL_H_ */
